/// The leaves of a query in PostgreSQL's SQL, over the jsonb expressions the indexes use; the
/// tree and the order are `QuerySQL`'s, and every value is bound (`SQL`) as a jsonb or text
/// parameter.
struct PostgresLeaves: QueryTerms {
  /// The board's stored key and coordinate columns (`PostgresEngine.keyColumns`): a GeoPoint
  /// field with `geo_<field>_lat`/`_lon` columns is bounded on them.
  var columns: Set<String> = []

  var always: SQL { "true" }
  var never: SQL { "false" }
  var rowId: SQL { "o.id" }

  /// On the field's key column when the board has one: the stored text of the value, compared
  /// with a leakproof operator an index can serve.
  func equalTo(_ field: String, _ value: JSONValue) -> SQL {
    let expression = expression(field)
    if value == .null { return "coalesce(\(sql: expression), 'null'::jsonb) = 'null'::jsonb" }
    if let key = keyColumn(field) {
      return "o.\(column: key) = (\(value.jsonText())::jsonb #>> '{}')"
    }
    return "\(sql: expression) = \(value.jsonText())::jsonb"
  }

  /// jsonb numbers compared numerically, on the expression the indexes use.
  func bound(_ field: String, _ comparison: String, _ value: Int64) -> SQL {
    "\(sql: SQL(verbatim: PostgresSchema.expression(for: field) + comparison))\(String(value))::jsonb"
  }

  /// Wrapped so that it is never NULL, the typed equality is no index's: the stored key
  /// serves it, for text and objects of text (a pointer) only, whose key is their one spelling
  /// (`1` and `1.0` are equal numbers with two texts).
  func seekTerm(_ field: String, _ value: JSONValue) -> SQL? {
    guard let key = keyColumn(field) else { return nil }
    switch value {
    case .string: break
    case .object(let fields):
      guard fields.values.allSatisfy({ if case .string = $0 { true } else { false } }) else {
        return nil
      }
    default: return nil
    }
    return "o.\(column: key) = (\(value.jsonText())::jsonb #>> '{}')"
  }

  /// The field's stored key column (`PostgresSchema.keyColumn`), if the board has made it.
  private func keyColumn(_ field: String) -> String? {
    PostgresSchema.keyColumn(for: field).flatMap { columns.contains($0) ? $0 : nil }
  }

  /// True when the field is `value`; a missing field is null. Never NULL.
  func equals(_ field: String, _ value: JSONValue) -> SQL {
    equality(expression(field), value)
  }

  func compares(_ field: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue)
    -> SQL
  {
    let expression = expression(field)
    let operation = SQL(verbatim: comparison.rawValue)
    switch value {
    case .int, .double:
      return """
        coalesce(jsonb_typeof(\(sql: expression)) = 'number' AND \
        \(sql: expression) \(sql: operation) \(value.jsonText())::jsonb, false)
        """
    case .string(let text):
      // By code point, as SQLite does, whatever the database's collation.
      return """
        coalesce(jsonb_typeof(\(sql: expression)) = 'string' AND \
        (\(sql: expression) #>> '{}') COLLATE "C" \(sql: operation) \(text)::text, false)
        """
    default: return never  // refused by validation
    }
  }

  func exists(_ field: String, _ present: Bool) -> SQL {
    present ? "(\(sql: expression(field)) IS NOT NULL)" : "(\(sql: expression(field)) IS NULL)"
  }

  /// The field is an array with an element equal to one of `list`.
  func arrayHolds(_ field: String, _ list: [JSONValue]) -> SQL {
    let expression = expression(field)
    let parts = SQL.balanced(list.map { equality("j.value", $0) }, separator: " OR ")
    return """
      EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(\(sql: expression)) = \
      'array' THEN \(sql: expression) END) j WHERE \(sql: parts))
      """
  }

  /// Numbers and strings in one pass over the array: the elements found in the hashed list
  /// of values, counted without repeats, must be as many as the values (jsonb equality: 1 and
  /// 1.0 are one). Else one pass per value.
  func arrayHoldsAll(_ field: String, _ list: [JSONValue]) -> SQL {
    guard let plain = PlainValues(list) else { return arrayHoldsEach(field, list) }
    let expression = expression(field)
    let values = JSONValue.array(plain.numbers + plain.texts.map(JSONValue.string)).jsonText()
    return """
      (SELECT count(DISTINCT j.value) FROM jsonb_array_elements(CASE WHEN \
      jsonb_typeof(\(sql: expression)) = 'array' THEN \(sql: expression) END) j WHERE j.value IN \
      (SELECT v.value FROM jsonb_array_elements(\(values)::jsonb) v)) = \(Int64(plain.distinctCount))
      """
  }

  /// PostgreSQL's own regular expressions (`~`), which its statement timeout cuts; the
  /// options as the embedded options of an ARE (`m` is its `w`: `^` and `$` at line breaks,
  /// a dot still matching one).
  func matches(_ field: String, _ pattern: String, _ options: String) -> SQL {
    let expression = expression(field)
    var embedded = ""
    if options.contains("i") { embedded += "i" }
    if options.contains("m") { embedded += "w" }
    if options.contains("x") { embedded += "x" }
    let full = embedded.isEmpty ? pattern : "(?" + embedded + ")" + pattern
    return """
      coalesce(jsonb_typeof(\(sql: expression)) = 'string' AND \
      (\(sql: expression) #>> '{}') ~ \(full)::text, false)
      """
  }

  func coordinate(_ path: String) -> SQL {
    let expression = expression(path)
    return """
      (CASE WHEN jsonb_typeof(\(sql: expression)) = 'number' THEN \
      (\(sql: expression) #>> '{}')::float8 END)
      """
  }

  /// On the jsonb expression an index of the path holds: between two numbers, jsonb's order
  /// leaves out every other type. A GeoPoint's coordinate with a column of its own
  /// (`forum index geo`) is bounded on that float8 column, whose comparison is leakproof: under
  /// row-level security an index condition, where no jsonb comparison may be one. The column
  /// holds the number the jsonb does (NULL past ±180, beyond every box), rounded to float8 as
  /// the distance reads it.
  func numberWithin(_ path: String, _ low: Double, _ high: Double) -> SQL {
    if let column = geoColumn(path) {
      // Bare, so the planner can make both bounds index conditions (NULL: no match).
      return
        "(o.\(column: column) >= \(sql: real(low)) AND o.\(column: column) <= \(sql: real(high)))"
    }
    let expression = expression(path)
    return """
      coalesce(\(sql: expression) >= \(JSONValue.double(low).jsonText())::jsonb AND \
      \(sql: expression) <= \(JSONValue.double(high).jsonText())::jsonb, false)
      """
  }

  func real(_ value: Double) -> SQL { "\(.real(value))::float8" }

  func smaller(_ first: SQL, _ second: SQL) -> SQL { "least(\(sql: first), \(sql: second))" }

  func orderExpression(_ field: String, presence: Set<String>) -> SQL {
    SQL(verbatim: PostgresSchema.orderExpression(for: field, presence: presence))
  }

  /// The coordinate column of `path` (`field.latitude` or `field.longitude`), if the board has
  /// one.
  private func geoColumn(_ path: String) -> String? {
    let parts = path.split(separator: ".")
    guard parts.count == 2 else { return nil }
    let axis: String
    switch parts[1] {
    case "latitude": axis = "lat"
    case "longitude": axis = "lon"
    default: return nil
    }
    let column = PostgresSchema.geoColumn(String(parts[0]), axis)
    return columns.contains(column) ? column : nil
  }

  private func expression(_ field: String) -> SQL {
    SQL(verbatim: PostgresSchema.expression(for: field))
  }

  private func equality(_ expression: SQL, _ value: JSONValue) -> SQL {
    if value == .null { return "(coalesce(\(sql: expression), 'null'::jsonb) = 'null'::jsonb)" }
    return "coalesce(\(sql: expression) = \(value.jsonText())::jsonb, false)"
  }
}

extension SQL {
  /// The statement's text and its parameters for libpq (values as text, bytes as bytes).
  var postgres: (sql: String, values: [PostgresValue]) {
    let (text, bound) = rendered(.postgres)
    return (text, bound.map(PostgresValue.init))
  }
}

extension PostgresValue {
  /// libpq takes every parameter as text (numbers in their decimal form) or bytes.
  init(_ value: SQLValue) {
    switch value {
    case .null: self = .null
    case .integer(let number): self = .text(String(number))
    case .real(let number): self = .text(String(number))
    case .text(let text): self = .text(text)
    case .blob(let bytes): self = .bytes(bytes)
    }
  }
}
