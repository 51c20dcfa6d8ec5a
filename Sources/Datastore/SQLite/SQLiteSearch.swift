/// The full-text index on SQLite: the `search_text` FTS5 table (trigram tokenizer, schema
/// version 8) and, for each class declared by `IndexSpec(textOf:fields:)`, triggers that keep its
/// row in the writer's transaction. Class and field names are `Validation.isName` names (checked
/// before they get here), so they are safe inside SQL text.
enum SQLiteSearch {
  /// The meta key recording which classes and fields the triggers index.
  static let metaKey = "search"

  /// Bumped when the trigger text below changes, so open files get the new triggers and their
  /// rows indexed again (format 2, issue 20: the text ends in two newlines).
  static let format = 2

  static func fields(of specs: [IndexSpec]) -> [String: [String]] { TextSearch.fields(of: specs) }

  /// A stable text of the declaration, recorded in `meta` beside the format.
  static func record(_ fields: [String: [String]]) -> String {
    "\(format) "
      + fields.keys.sorted().map { "\($0):\(fields[$0]!.joined(separator: ","))" }.joined(
        separator: ";")
  }

  /// The declaration a record describes (empty for none or a record of another format).
  static func fields(fromRecord record: String?, format: Int = format) -> [String: [String]] {
    guard let record, record.hasPrefix("\(format) ") else { return [:] }
    var fields: [String: [String]] = [:]
    for entry in record.dropFirst("\(format) ".count).split(separator: ";") {
      let parts = entry.split(separator: ":", maxSplits: 1)
      guard parts.count == 2 else { continue }
      fields[String(parts[0])] = parts[1].split(separator: ",").map(String.init)
    }
    return fields
  }

  /// The text a row of `className` is indexed by (`row` is NEW, OLD or a table alias).
  static func body(_ row: String, fields: [String]) -> String {
    fields.map { "coalesce(json_extract(\(row).data, \(SQLiteRules.path($0))), '')" }.joined(
      separator: " || char(10) || ")
  }

  /// What the index holds of a row: its text with two newlines after it, so that every one- or
  /// two-character substring of the text begins a trigram (the last two characters too), and a
  /// short word is found among the trigrams it begins (`SQLiteEngine.trigrams(startingWith:)`).
  static func indexed(_ row: String, fields: [String]) -> String {
    "(\(body(row, fields: fields))) || char(10, 10)"
  }

  /// The triggers that keep `className`'s rows in the index. An update re-indexes only when the
  /// text changed: a comment updates its thread's counters, which must not re-tokenize the thread.
  static func triggers(_ className: String, fields: [String]) -> [String] {
    let new = indexed("NEW", fields: fields)
    let old = indexed("OLD", fields: fields)
    return [
      """
      CREATE TRIGGER search_insert_\(className) AFTER INSERT ON objects
      WHEN NEW.class = '\(className)' BEGIN
        INSERT INTO search_text(rowid, body) VALUES (NEW.id, \(new));
      END
      """,
      """
      CREATE TRIGGER search_delete_\(className) AFTER DELETE ON objects
      WHEN OLD.class = '\(className)' BEGIN
        INSERT INTO search_text(search_text, rowid, body) VALUES ('delete', OLD.id, \(old));
      END
      """,
      """
      CREATE TRIGGER search_update_\(className) AFTER UPDATE OF data ON objects
      WHEN NEW.class = '\(className)' AND (\(new)) IS NOT (\(old)) BEGIN
        INSERT INTO search_text(search_text, rowid, body) VALUES ('delete', OLD.id, \(old));
        INSERT INTO search_text(rowid, body) VALUES (NEW.id, \(new));
      END
      """,
    ]
  }

  /// Installs the triggers for `fields` and indexes every existing row of those classes, in one
  /// transaction, unless the file already records exactly that declaration. Returns the
  /// declaration now in force.
  static func install(_ fields: [String: [String]], on connection: Connection) throws -> [String:
    [String]]
  {
    let wanted = record(fields)
    let find = "SELECT value FROM meta WHERE key = ?"
    let recorded = try connection.prepare(find).firstRow([.text(metaKey)]) { try $0.text(0) } ?? nil
    if recorded == wanted { return fields }
    try connection.transaction {
      // Another process may have installed it while this one waited for the lock.
      let current = try connection.prepare(find).firstRow([.text(metaKey)]) { try $0.text(0) }
      guard current ?? nil != wanted else { return }
      let old = try connection.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'search\\_%' ESCAPE '\\'"
      ).rows { try $0.text(0) ?? "" }
      for name in old { try connection.execute("DROP TRIGGER \"\(name)\"") }
      // Format 1 indexed the same text without the two newlines. What they add to a row's
      // trigrams are those of its last two characters followed by them, so each row gets only
      // these, inserted under its rowid (a contentless index keeps a row as the union of what was
      // inserted for it, and the delete triggers remove all of it): a million posts take seconds,
      // where indexing them again took minutes.
      let upgrade = fields == Self.fields(fromRecord: current ?? nil, format: 1)
      if !upgrade {
        try connection.execute("INSERT INTO search_text(search_text) VALUES ('delete-all')")
      }
      for className in fields.keys.sorted() {
        for sql in triggers(className, fields: fields[className]!) { try connection.execute(sql) }
        let text =
          upgrade
          ? "substr(\(body("o", fields: fields[className]!)), -2) || char(10, 10)"
          : indexed("o", fields: fields[className]!)
        try connection.run(
          """
          INSERT INTO search_text(rowid, body)
          SELECT o.id, \(text) FROM objects o WHERE o.class = ? ORDER BY o.id
          """, [.text(className)])
      }
      try connection.run(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(metaKey), .text(wanted)])
    }
    return fields
  }

  /// Pages one `mergeStep` writes at most: a few milliseconds of work, between two writes.
  static let mergePages = 32

  /// One step of merging the index's segments (schema 21 turned FTS5's merges in commits off):
  /// only when a level holds `usermerge` (16) segments or a merge is under way, at most
  /// `mergePages` pages. FTS5 counts two changes or more when it merged.
  static let mergeStep =
    "INSERT INTO search_text(search_text, rank) VALUES ('merge', \(mergePages))"

  /// The FTS5 query for the terms that trigrams can serve (three or more characters): each a
  /// quoted phrase, so nothing in it is syntax (`"` doubled; `*`, `-`, `:`, `NEAR` are text);
  /// and for each shorter term, the index's trigrams it begins (`shortTerms`), any of them.
  /// Nil when no term is served.
  static func matchExpression(_ terms: [String], shortTerms: [[String]] = []) -> String? {
    let phrases =
      terms.filter { $0.unicodeScalars.count >= 3 }.map(phrase)
      + shortTerms.map { "(" + $0.map(phrase).joined(separator: " OR ") + ")" }
    return phrases.isEmpty ? nil : phrases.joined(separator: " AND ")
  }

  private static func phrase(_ text: String) -> String {
    "\"" + text.replacing("\"", with: "\"\"") + "\""
  }

}
