extension SQL {
  /// A LIKE pattern matching `term` anywhere, a backslash escaping `%`, `_` and itself: the
  /// escape both engines read (PostgreSQL's default; SQLite's with `ESCAPE '\'`).
  static func likePattern(_ term: String) -> String {
    var pattern = "%"
    for character in term {
      if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
      pattern.append(character)
    }
    return pattern + "%"
  }
}
