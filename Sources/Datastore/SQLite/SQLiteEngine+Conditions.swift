/// The leaves of a query in SQLite's SQL, over `json_type`/`json_extract` of `o.data`; the tree
/// and the order are `QuerySQL`'s, and every value is bound (`SQL`).
struct SQLiteLeaves: QueryTerms {
  /// The query's class's counters (`EngineRules.counterFields`), read from their own column.
  var counters: Set<String> = []

  var always: SQL { "1" }
  var never: SQL { "0" }
  var rowId: SQL { "o.id" }

  /// On `json_extract` itself, which the expression indexes hold.
  func equalTo(_ field: String, _ value: JSONValue) -> SQL {
    let expression = SQL(verbatim: SQLiteEngine.expression(for: field, counters: counters))
    switch value {
    case .null: return "\(sql: expression) IS NULL"
    case .bool(let flag): return "\(sql: expression) = \(flag ? 1 : 0)"
    case .int(let int): return "\(sql: expression) = \(int)"
    case .double(let double): return "\(sql: expression) = \(.real(double))"
    case .string(let string): return "\(sql: expression) = \(string)"
    case let composite:
      // json_extract returns arrays and objects as compact JSON; ours is stored the same way.
      return "\(sql: expression) = \(composite.jsonText())"
    }
  }

  func bound(_ field: String, _ comparison: String, _ value: Int64) -> SQL {
    "\(sql: SQL(verbatim: SQLiteEngine.expression(for: field, counters: counters) + comparison))\(value)"
  }

  func seekTerm(_ field: String, _ value: JSONValue) -> SQL? {
    guard !QueryCondition.builtInFields.contains(field) else { return nil }
    let expression = SQL(verbatim: SQLiteEngine.expression(for: field, counters: counters))
    switch value {
    case .string(let text): return "\(sql: expression) = \(text)"
    case .int(let number): return "\(sql: expression) = \(number)"
    case .array, .object: return "\(sql: expression) = \(value.jsonText())"
    case .null, .bool, .double: return nil
    }
  }

  func equals(_ field: String, _ value: JSONValue) -> SQL {
    let (expression, type) = operand(field)
    return "coalesce(\(sql: equality(value: expression, type: type, value)), 0)"
  }

  func compares(_ field: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue)
    -> SQL
  {
    "coalesce(\(sql: range(field, comparison, value)), 0)"
  }

  func exists(_ field: String, _ present: Bool) -> SQL {
    if QueryCondition.builtInFields.contains(field) { return present ? always : never }
    return present ? "(\(sql: typeOf(field)) IS NOT NULL)" : "(\(sql: typeOf(field)) IS NULL)"
  }

  /// The field is an array with an element equal to one of `list`.
  func arrayHolds(_ field: String, _ list: [JSONValue]) -> SQL {
    guard !QueryCondition.builtInFields.contains(field) else { return never }
    let parts = list.map {
      "coalesce(\(sql: equality(value: "j.value", type: "j.type", $0)), 0)" as SQL
    }
    return
      "(\(sql: typeOf(field)) = 'array' AND EXISTS (SELECT 1 FROM json_each(o.\(sql: SQL(verbatim: column(field))), \(literal: "$." + field)) j WHERE \(sql: SQL.balanced(parts, separator: " OR "))))"
  }

  /// Numbers and strings in one pass over the array: the elements equal to one of them (an
  /// `IN` list, looked up by index), counted without repeats, must be as many as the values.
  /// Else one pass per value.
  func arrayHoldsAll(_ field: String, _ list: [JSONValue]) -> SQL {
    guard !QueryCondition.builtInFields.contains(field) else { return never }
    guard let plain = PlainValues(list) else { return arrayHoldsEach(field, list) }
    var parts: [SQL] = []
    if !plain.numbers.isEmpty {
      let numbers = plain.numbers.map { value -> SQL in
        switch value {
        case .int(let number): return "\(number)"
        case .double(let number): return "\(.real(number))"
        default: return "NULL"
        }
      }
      parts.append(
        "(j.type IN ('integer', 'real') AND j.value IN (\(sql: SQL.joined(numbers, separator: ", "))))"
      )
    }
    if !plain.texts.isEmpty {
      let texts = plain.texts.map { "\($0)" as SQL }
      parts.append("(j.type = 'text' AND j.value IN (\(sql: SQL.joined(texts, separator: ", "))))")
    }
    return
      "(\(sql: typeOf(field)) = 'array' AND (SELECT count(DISTINCT j.value) FROM json_each(o.\(sql: SQL(verbatim: column(field))), \(literal: "$." + field)) j WHERE \(sql: SQL.joined(parts, separator: " OR "))) = \(Int64(plain.distinctCount)))"
  }

  /// PCRE2 through `forum_regexp` (the shim registers it on each connection; it loads the
  /// library on first use and stops a match past its step limit).
  func matches(_ field: String, _ pattern: String, _ options: String) -> SQL {
    guard !QueryCondition.builtInFields.contains(field) || field == "objectId" else {
      return never
    }
    let (expression, type) = operand(field)
    var flags: Int64 = 0
    if options.contains("i") { flags |= 1 }
    if options.contains("m") { flags |= 2 }
    if options.contains("x") { flags |= 4 }
    return
      "coalesce(\(sql: type) = 'text' AND forum_regexp(\(pattern), \(flags), \(sql: expression)), 0)"
  }

  func coordinate(_ path: String) -> SQL {
    let expression = SQL(verbatim: SQLiteEngine.expression(for: path, counters: counters))
    return
      "(CASE WHEN \(sql: typeOf(path)) IN ('integer', 'real') THEN \(sql: expression) END)"
  }

  /// On `json_extract` itself, which an expression index of the path holds (bare, so the
  /// planner can seek it: NULL for a missing path, which a box, never negated, takes as no
  /// match): between two numbers, SQLite's order leaves out text, blobs and NULL.
  func numberWithin(_ path: String, _ low: Double, _ high: Double) -> SQL {
    let expression = SQL(verbatim: SQLiteEngine.expression(for: path, counters: counters))
    return "(\(sql: expression) >= \(.real(low)) AND \(sql: expression) <= \(.real(high)))"
  }

  func real(_ value: Double) -> SQL { "\(.real(value))" }

  func smaller(_ first: SQL, _ second: SQL) -> SQL { "min(\(sql: first), \(sql: second))" }

  /// The element `j` of a `json_each` is `value`, type for type. Never NULL.
  func elementEquals(_ value: JSONValue) -> SQL {
    "coalesce(\(sql: equality(value: "j.value", type: "j.type", value)), 0)"
  }

  func orderExpression(_ field: String, presence: Set<String>) -> SQL {
    SQL(
      verbatim: SQLiteEngine.orderExpression(for: field, presence: presence, counters: counters))
  }

  /// `json_type` of a field: NULL when missing, else `null`, `true`, `false`, `integer`,
  /// `real`, `text`, `array` or `object`.
  private func typeOf(_ field: String) -> SQL {
    "json_type(o.\(sql: SQL(verbatim: column(field))), \(literal: "$." + field))"
  }

  private func column(_ field: String) -> String { SQLiteEngine.column(of: field, counters) }

  /// The field's value and its type as SQL, for stored fields and the built-in columns.
  private func operand(_ field: String) -> (value: SQL, type: SQL) {
    switch field {
    case "objectId": return ("o.objectId", "'text'")
    case "createDate", "updateDate": return (SQL(verbatim: "o." + field), "'integer'")
    default:
      return (SQL(verbatim: SQLiteEngine.expression(for: field, counters: counters)), typeOf(field))
    }
  }

  /// True when `expression` (of JSON type `type`) is `value`, type for type. May be NULL.
  private func equality(value expression: SQL, type: SQL, _ value: JSONValue) -> SQL {
    switch value {
    case .null: return "(\(sql: type) IS NULL OR \(sql: type) = 'null')"
    case .bool(let flag):
      return flag ? "(\(sql: type) = 'true')" : "(\(sql: type) = 'false')"
    case .int(let number):
      return "(\(sql: type) IN ('integer', 'real') AND \(sql: expression) = \(number))"
    case .double(let number):
      return "(\(sql: type) IN ('integer', 'real') AND \(sql: expression) = \(.real(number)))"
    case .string(let text):
      return "(\(sql: type) = 'text' AND \(sql: expression) = \(text))"
    case .array:
      // json_extract gives composites as compact JSON, stored with sorted keys like jsonText.
      return "(\(sql: type) = 'array' AND \(sql: expression) = \(value.jsonText()))"
    case .object:
      return "(\(sql: type) = 'object' AND \(sql: expression) = \(value.jsonText()))"
    }
  }

  private func range(
    _ field: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue
  ) -> SQL {
    var (expression, type) = operand(field)
    // A range of ids is no seek: the id index holds rows the caller may not read (a listing
    // seeks only indexes of readable rows, `SQLiteEngine.findStatement`).
    if field == "objectId" { expression = "+o.objectId" }
    let operation = SQL(verbatim: comparison.rawValue)
    switch value {
    case .int(let number):
      return
        "(\(sql: type) IN ('integer', 'real') AND \(sql: expression) \(sql: operation) \(number))"
    case .double(let number):
      return
        "(\(sql: type) IN ('integer', 'real') AND \(sql: expression) \(sql: operation) \(.real(number)))"
    case .string(let text):
      // SQLite compares text by memcmp: UTF-8 byte order, which is code point order.
      return "(\(sql: type) = 'text' AND \(sql: expression) \(sql: operation) \(text))"
    default: return never  // refused by validation
    }
  }
}

extension Connection {
  /// `statement` rendered for SQLite (`?` bound in order), prepared once per text: its rows.
  func rows<T>(_ statement: SQL, _ transform: (Row) throws -> T) throws -> [T] {
    let (sql, values) = statement.rendered(.sqlite)
    return try prepare(sql).rows(values, transform)
  }

  /// The first row of `statement`, or nil.
  func firstRow<T>(_ statement: SQL, _ transform: (Row) throws -> T) throws -> T? {
    let (sql, values) = statement.rendered(.sqlite)
    return try prepare(sql).firstRow(values, transform)
  }

  /// Runs `statement` for what it writes. (Labelled: `run(_:)` takes text written by hand.)
  func run(sql statement: SQL) throws {
    let (sql, values) = statement.rendered(.sqlite)
    try run(sql, values)
  }
}
