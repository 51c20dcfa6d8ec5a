/// `QueryCondition` in PostgreSQL's SQL, over the jsonb expressions the indexes use. Values are
/// bound as jsonb parameters.
extension PostgresEngine {
  /// One condition as a boolean SQL expression (never NULL).
  static func conditionSQL(_ condition: QueryCondition, values: inout [PostgresValue]) -> String {
    switch condition {
    case .equal(let field, let value):
      return equality(PostgresSchema.expression(for: field), value, values: &values)
    case .notEqual(let field, let value):
      return "NOT " + equality(PostgresSchema.expression(for: field), value, values: &values)
    case .compare(let field, let comparison, let value):
      return range(PostgresSchema.expression(for: field), comparison, value, values: &values)
    case .isIn(let field, let list):
      return anyEqual(PostgresSchema.expression(for: field), list, values: &values)
    case .notIn(let field, let list):
      return "NOT " + anyEqual(PostgresSchema.expression(for: field), list, values: &values)
    case .exists(let field, let present):
      return "(\(PostgresSchema.expression(for: field)) IS \(present ? "NOT " : "")NULL)"
    case .arrayContainsAny(let field, let list):
      guard !list.isEmpty else { return "false" }
      return arrayHolds(PostgresSchema.expression(for: field), list, values: &values)
    case .arrayContainsAll(let field, let list):
      guard !list.isEmpty else { return "false" }
      let expression = PostgresSchema.expression(for: field)
      let parts = list.map { arrayHolds(expression, [$0], values: &values) }
      return "(" + parts.joined(separator: " AND ") + ")"
    case .and(let parts):
      guard !parts.isEmpty else { return "true" }
      let rendered = parts.map { conditionSQL($0, values: &values) }
      return "(" + rendered.joined(separator: " AND ") + ")"
    case .or(let parts):
      guard !parts.isEmpty else { return "false" }
      let rendered = parts.map { conditionSQL($0, values: &values) }
      return "(" + rendered.joined(separator: " OR ") + ")"
    }
  }

  /// True when the jsonb `expression` is `value`; a missing field is null. Never NULL.
  private static func equality(
    _ expression: String, _ value: JSONValue, values: inout [PostgresValue]
  ) -> String {
    if value == .null { return "(coalesce(\(expression), 'null'::jsonb) = 'null'::jsonb)" }
    values.append(.text(value.jsonText()))
    return "coalesce(\(expression) = $\(values.count)::jsonb, false)"
  }

  private static func range(
    _ expression: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue,
    values: inout [PostgresValue]
  ) -> String {
    let operation = comparison.rawValue
    switch value {
    case .int, .double:
      values.append(.text(value.jsonText()))
      return "coalesce(jsonb_typeof(\(expression)) = 'number' AND "
        + "\(expression) \(operation) $\(values.count)::jsonb, false)"
    case .string(let text):
      // By code point, as SQLite does, whatever the database's collation.
      values.append(.text(text))
      return "coalesce(jsonb_typeof(\(expression)) = 'string' AND "
        + "(\(expression) #>> '{}') COLLATE \"C\" \(operation) $\(values.count)::text, false)"
    default: return "false"  // refused by validation
    }
  }

  private static func anyEqual(
    _ expression: String, _ list: [JSONValue], values: inout [PostgresValue]
  ) -> String {
    guard !list.isEmpty else { return "false" }
    return "(" + list.map { equality(expression, $0, values: &values) }.joined(separator: " OR ")
      + ")"
  }

  /// The field is an array with an element equal to one of `list`.
  private static func arrayHolds(
    _ expression: String, _ list: [JSONValue], values: inout [PostgresValue]
  ) -> String {
    let parts = list.map { equality("j.value", $0, values: &values) }
    return "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(\(expression)) = "
      + "'array' THEN \(expression) END) j WHERE " + parts.joined(separator: " OR ") + ")"
  }
}
