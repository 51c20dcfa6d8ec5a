/// The first column of each index partial to one class's public rows (schema 25: the class is
/// the index's condition, not a column in front), as the file holds them: the board's declared
/// indexes and an app's (`forum index add`, made by whichever process).
///
/// A listing of such a class names its class as an equality, and SQLite (no statistics) took
/// that equality for narrow: it sorted the class's rows from its creation index
/// (`objects_public_createDate`, class in front) instead of walking the index in the listing's
/// order. A query that seeks or orders by a field one of these indexes starts with says its
/// class term holds for most rows (`likelihood`), so the planner walks that index; any other
/// query keeps the plain equality, which seeks the class (a listing without an order, by
/// `objectId` or by `updateDate`: told otherwise, the planner walked the whole table).
struct SQLiteIndexLeads: Equatable {
  /// `class literal` + NUL + `first column's SQL`, for each prefix-less partial index.
  private var leads: Set<String> = []

  init() {}

  /// From the name and `sql` of `objects`' indexes in `sqlite_schema`: only the text
  /// `SQLiteEngine.indexSQL` writes (`CREATE INDEX "name"`, then `ON objects(`), read after the
  /// index's own name (a name may hold any text). Read as bytes: the generic string searches
  /// cost the first listing of every command 2 M instructions.
  init(indexes: [(name: String, sql: String)]) {
    for (name, sql) in indexes {
      let bytes = Array(sql.utf8)
      guard let on = SQLiteIndexLeads.columns(of: name, in: bytes),
        let condition = SQLiteIndexLeads.ends(of: "WHERE public_class = ", in: bytes).last,
        condition > on, let lead = SQLiteIndexLeads.firstColumn(bytes[on...]),
        !lead.elementsEqual("public_class".utf8)
      else { continue }
      leads.insert(
        String(decoding: bytes[condition...], as: UTF8.self) + "\u{0}"
          + String(decoding: lead, as: UTF8.self))
    }
  }

  /// Where the columns of index `name` start in its `sql`: after `CREATE INDEX` (and `IF NOT
  /// EXISTS`, as `indexSQL` writes it; `sqlite_schema` keeps it without), its quoted name,
  /// white space and `ON objects(`. Nil for text written otherwise.
  private static func columns(of name: String, in bytes: [UInt8]) -> Int? {
    let quoted = "\"" + name.replacing("\"", with: "\"\"") + "\""
    var at = 0
    for part in ["CREATE INDEX ", "IF NOT EXISTS ", quoted] {
      let text = Array(part.utf8)
      if bytes[at...].starts(with: text) {
        at += text.count
      } else if part != "IF NOT EXISTS " {
        return nil
      }
    }
    while at < bytes.count, bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\n") {
      at += 1
    }
    let on = Array("ON objects(".utf8)
    return bytes[at...].starts(with: on) ? at + on.count : nil
  }

  /// Whether the class's public rows have an index starting with `expression` (as
  /// `SQLiteEngine.orderExpression` renders a field with no table).
  func leads(_ className: String, with expression: String) -> Bool {
    !leads.isEmpty && leads.contains(SQLiteRules.literal(className) + "\u{0}" + expression)
  }

  /// Whether `query` seeks or orders by a field an index of its class starts with, in a term
  /// the index serves: its first order, an equality of `equalTo` or a bound (`greaterThan`,
  /// `lessThan`), an app's equality of a text, a whole number, an array or an object (its seek
  /// term, `SQLiteLeaves.seekTerm`), a GeoPoint's box or distance by its latitude (as
  /// `SQLiteEngine.ordered` indexes it). An app's typed range, `$in`, or a null, boolean or
  /// double equality is no such term: said unselective beside it, the class was walked whole.
  func walkable(_ query: Query, rules: EngineRules) -> Bool {
    guard !leads.isEmpty else { return false }
    let presence = rules.presenceOrdered(query.className)
    let counters = rules.counterFields(of: query.className)
    // The order by what a listing orders by (a flag's presence); the terms by the value they
    // compare (`SQLiteLeaves`: `expression`, never a flag's presence).
    if let first = query.order.first,
      leads(
        query.className,
        with: SQLiteEngine.orderExpression(
          for: first.hasPrefix("-") ? String(first.dropFirst()) : first, presence: presence,
          table: nil, counters: counters))
    {
      return true
    }
    var fields: [String] = []
    fields += query.equalTo.keys
    fields += query.greaterThan.keys
    fields += query.lessThan.keys
    let leaves = SQLiteLeaves(counters: counters)
    for condition in query.conditions {
      switch condition {
      case .equal(let field, let value) where leaves.seekTerm(field, value) != nil:
        fields.append(field)
      case .withinBox(let field, _, _), .near(let field, _, maxRadians: .some):
        fields.append(field + ".latitude")
      default: continue
      }
    }
    return fields.contains {
      leads(
        query.className, with: SQLiteEngine.expression(for: $0, table: nil, counters: counters))
    }
  }

  /// Where each `needle` in `bytes` ends.
  private static func ends(of needle: String, in bytes: [UInt8]) -> [Int] {
    let needle = Array(needle.utf8)
    guard bytes.count >= needle.count else { return [] }
    return (0...(bytes.count - needle.count)).filter {
      bytes[$0..<($0 + needle.count)].elementsEqual(needle)
    }.map { $0 + needle.count }
  }

  /// The index's first column: its text up to the first comma or closing parenthesis outside
  /// parentheses and quotes.
  private static func firstColumn(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
    var depth = 0
    var quote: UInt8?
    for index in text.indices {
      let byte = text[index]
      if let open = quote {
        if byte == open { quote = nil }  // a doubled quote closes and opens again
        continue
      }
      switch byte {
      case UInt8(ascii: "'"), UInt8(ascii: "\""): quote = byte
      case UInt8(ascii: "("): depth += 1
      case UInt8(ascii: ")") where depth > 0: depth -= 1
      case UInt8(ascii: ",") where depth == 0, UInt8(ascii: ")"): return text[..<index]
      default: continue
      }
    }
    return nil
  }
}
