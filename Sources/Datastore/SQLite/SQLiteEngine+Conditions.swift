/// `QueryCondition` in SQLite's SQL. Values are bound in the order their `?` appear.
extension SQLiteEngine {
  /// One condition as a boolean SQL expression (never NULL: `NOT` of it must mean "does not
  /// match").
  static func conditionSQL(_ condition: QueryCondition, values: inout [SQLValue]) -> String {
    switch condition {
    case .equal(let field, let value):
      return "coalesce(\(equality(field, value, values: &values)), 0)"
    case .notEqual(let field, let value):
      return "NOT coalesce(\(equality(field, value, values: &values)), 0)"
    case .compare(let field, let comparison, let value):
      return "coalesce(\(range(field, comparison, value, values: &values)), 0)"
    case .isIn(let field, let list):
      return "coalesce(\(anyEqual(field, list, values: &values)), 0)"
    case .notIn(let field, let list):
      return "NOT coalesce(\(anyEqual(field, list, values: &values)), 0)"
    case .exists(let field, let present):
      if QueryCondition.builtInFields.contains(field) { return present ? "1" : "0" }
      return "(\(typeOf(field)) IS \(present ? "NOT " : "")NULL)"
    case .arrayContainsAny(let field, let list):
      guard !list.isEmpty else { return "0" }
      return arrayHolds(field, list, values: &values)
    case .arrayContainsAll(let field, let list):
      guard !list.isEmpty else { return "0" }
      let parts = list.map { arrayHolds(field, [$0], values: &values) }
      return "(" + parts.joined(separator: " AND ") + ")"
    case .and(let parts):
      guard !parts.isEmpty else { return "1" }
      let rendered = parts.map { conditionSQL($0, values: &values) }
      return "(" + rendered.joined(separator: " AND ") + ")"
    case .or(let parts):
      guard !parts.isEmpty else { return "0" }
      let rendered = parts.map { conditionSQL($0, values: &values) }
      return "(" + rendered.joined(separator: " OR ") + ")"
    }
  }

  /// `json_type` of a field: NULL when missing, else `null`, `true`, `false`, `integer`,
  /// `real`, `text`, `array` or `object`.
  private static func typeOf(_ field: String) -> String {
    "json_type(o.data, '$.\(field)')"
  }

  /// The field's value and its type as SQL, for stored fields and the built-in columns.
  private static func operand(_ field: String) -> (value: String, type: String) {
    switch field {
    case "objectId": return ("o.objectId", "'text'")
    case "createDate", "updateDate": return ("o.\(field)", "'integer'")
    default: return (expression(for: field), typeOf(field))
    }
  }

  private static func equality(_ field: String, _ value: JSONValue, values: inout [SQLValue])
    -> String
  {
    let (expression, type) = operand(field)
    return equality(value: expression, type: type, value, values: &values)
  }

  /// True when `expression` (of JSON type `type`) is `value`, type for type. May be NULL.
  private static func equality(
    value expression: String, type: String, _ value: JSONValue, values: inout [SQLValue]
  ) -> String {
    switch value {
    case .null: return "(\(type) IS NULL OR \(type) = 'null')"
    case .bool(let flag): return "(\(type) = '\(flag ? "true" : "false")')"
    case .int(let number):
      values.append(.integer(number))
      return "(\(type) IN ('integer', 'real') AND \(expression) = ?)"
    case .double(let number):
      values.append(.real(number))
      return "(\(type) IN ('integer', 'real') AND \(expression) = ?)"
    case .string(let text):
      values.append(.text(text))
      return "(\(type) = 'text' AND \(expression) = ?)"
    case .array, .object:
      // json_extract gives composites as compact JSON, stored with sorted keys like jsonText.
      values.append(.text(value.jsonText()))
      let kind = value.objectValue == nil ? "array" : "object"
      return "(\(type) = '\(kind)' AND \(expression) = ?)"
    }
  }

  private static func range(
    _ field: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue,
    values: inout [SQLValue]
  ) -> String {
    let (expression, type) = operand(field)
    switch value {
    case .int(let number):
      values.append(.integer(number))
      return "(\(type) IN ('integer', 'real') AND \(expression) \(comparison.rawValue) ?)"
    case .double(let number):
      values.append(.real(number))
      return "(\(type) IN ('integer', 'real') AND \(expression) \(comparison.rawValue) ?)"
    case .string(let text):
      // SQLite compares text by memcmp: UTF-8 byte order, which is code point order.
      values.append(.text(text))
      return "(\(type) = 'text' AND \(expression) \(comparison.rawValue) ?)"
    default: return "0"  // refused by validation
    }
  }

  private static func anyEqual(_ field: String, _ list: [JSONValue], values: inout [SQLValue])
    -> String
  {
    guard !list.isEmpty else { return "0" }
    let parts = list.map { "coalesce(\(equality(field, $0, values: &values)), 0)" }
    return "(" + parts.joined(separator: " OR ") + ")"
  }

  /// The field is an array with an element equal to one of `list`.
  private static func arrayHolds(_ field: String, _ list: [JSONValue], values: inout [SQLValue])
    -> String
  {
    guard !QueryCondition.builtInFields.contains(field) else { return "0" }
    let parts = list.map {
      "coalesce(\(equality(value: "j.value", type: "j.type", $0, values: &values)), 0)"
    }
    return
      "(\(typeOf(field)) = 'array' AND EXISTS (SELECT 1 FROM json_each(o.data, '$.\(field)') j "
      + "WHERE " + parts.joined(separator: " OR ") + "))"
  }
}
