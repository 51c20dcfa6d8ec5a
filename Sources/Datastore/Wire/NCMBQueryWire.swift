/// A `Query` asked as NCMB's object search asks it (`GET classes/C?where=…&order=…&limit=…&
/// skip=…&include=…&count=1`), for the remote engine: the server reads it with the parser every
/// app's query goes through (`NCMBQuery`), so there is one reader of NCMB's queries. A query
/// NCMB has no words for (the board's unread filter, `keys`, a cost budget, two conditions of
/// one kind on one field…) has no parameters here and goes through `forum/find` whole. Beside
/// NCMB's parameters, `includeKeys` (the board's: which fields of the included objects are
/// read, so that a big user object costs a list nothing) is read by the same parser.
extension Query {
  /// The `where` JSON of the conditions (every kind `QueryCondition` has), or nil.
  public var ncmbWhere: String? {
    var object = NCMBWhere()
    for (field, value) in equalTo.sorted(by: { $0.key < $1.key }) {
      guard object.add(.equal(field, value)) else { return nil }
    }
    for (field, value) in greaterThan.sorted(by: { $0.key < $1.key }) {
      guard object.add(.compare(field, .greaterThan, .int(value))) else { return nil }
    }
    for (field, value) in lessThan.sorted(by: { $0.key < $1.key }) {
      guard object.add(.compare(field, .lessThan, .int(value))) else { return nil }
    }
    for condition in conditions {
      guard object.add(condition) else { return nil }
    }
    // `$nearSphere` orders by distance: it must be the query's `nearest`, and the only one.
    guard object.nearest?.field == nearest?.field, object.nearest?.point == nearest?.point else {
      return nil
    }
    return object.fields.isEmpty ? "" : JSONValue.object(object.fields).jsonText()
  }

  /// The search's parameters in the order sent (`count`: the answer adds the count and lists
  /// nothing), or nil when NCMB cannot ask this query.
  public func ncmbParameters(count: Bool = false) -> [(String, String)]? {
    guard !unreadOnly, keys == nil, costBudget == nil,
      let whereText = ncmbWhere
    else { return nil }
    var parameters: [(String, String)] = []
    if !whereText.isEmpty { parameters.append(("where", whereText)) }
    if count { return parameters + [("count", "1"), ("limit", "0")] }
    guard !order.isEmpty, order.allSatisfy({ !$0.isEmpty && !$0.contains(",") }),
      include.allSatisfy({ !$0.isEmpty && !$0.contains(",") }),
      (1...Query.maximumLimit).contains(limit), skip >= 0
    else { return nil }
    parameters.append(("order", order.joined(separator: ",")))
    parameters.append(("limit", String(limit)))
    if skip > 0 { parameters.append(("skip", String(skip))) }
    if !include.isEmpty { parameters.append(("include", include.joined(separator: ","))) }
    if let includeKeys {
      guard !includeKeys.isEmpty, includeKeys.allSatisfy({ !$0.isEmpty && !$0.contains(",") })
      else { return nil }
      parameters.append(("includeKeys", includeKeys.sorted().joined(separator: ",")))
    }
    return parameters
  }
}

/// A `where` object being built: each field's equality or its operators, `$or` once.
private struct NCMBWhere {
  var fields: [String: JSONValue] = [:]
  var nearest: (field: String, point: GeoPoint)?

  /// Adds `condition`; false when NCMB's `where` cannot say it together with what is there.
  mutating func add(_ condition: QueryCondition) -> Bool {
    switch condition {
    case .equal(let field, let value):
      guard NCMBWhere.isName(field), fields[field] == nil, NCMBWhere.isOperand(value),
        !NCMBWhere.looksLikeOperators(value)
      else { return false }
      fields[field] = value
      return true
    case .notEqual(let field, let value): return add(field, "$ne", value)
    case .compare(let field, let comparison, let value):
      guard !NCMBWhere.isObject(value) else { return false }
      let name =
        switch comparison {
        case .lessThan: "$lt"
        case .lessThanOrEqual: "$lte"
        case .greaterThan: "$gt"
        case .greaterThanOrEqual: "$gte"
        }
      return add(field, name, value)
    case .isIn(let field, let values): return add(field, "$in", .array(values))
    case .notIn(let field, let values): return add(field, "$nin", .array(values))
    case .exists(let field, let exists): return add(field, "$exists", .bool(exists))
    case .arrayContainsAny(let field, let values): return add(field, "$inArray", .array(values))
    case .arrayContainsAll(let field, let values): return add(field, "$all", .array(values))
    case .arrayContainsNone(let field, let values):
      return add(field, "$ninArray", .array(values))
    case .matches(let field, let pattern, let options):
      guard add(field, "$regex", .string(pattern)) else { return false }
      return options.isEmpty || add(field, "$options", .string(options))
    case .withinBox(let field, let southwest, let northeast):
      return add(
        field, "$within",
        .object(["$box": .array([NCMBWhere.point(southwest), NCMBWhere.point(northeast)])]))
    case .near(let field, let point, let maxRadians):
      guard nearest == nil, add(field, "$nearSphere", NCMBWhere.point(point)) else {
        return false
      }
      nearest = (field, point)
      guard let maxRadians else { return true }
      return add(field, "$maxDistanceInRadians", .double(maxRadians))
    case .and(let parts):
      for part in parts where !add(part) { return false }
      return true
    case .or(let alternatives):
      guard fields["$or"] == nil, !alternatives.isEmpty else { return false }
      var objects: [JSONValue] = []
      for alternative in alternatives {
        var inner = NCMBWhere()
        // `$nearSphere` inside `$or` orders nothing NCMB could say.
        guard inner.add(alternative), inner.nearest == nil, !inner.fields.isEmpty else {
          return false
        }
        objects.append(.object(inner.fields))
      }
      fields["$or"] = .array(objects)
      return true
    }
  }

  /// `{field: {name: operand}}` beside the field's other operators (never an equality).
  private mutating func add(_ field: String, _ name: String, _ operand: JSONValue) -> Bool {
    guard NCMBWhere.isName(field) else { return false }
    if case .array(let values) = operand,
      name != "$within", !values.allSatisfy(NCMBWhere.isOperand)
    {
      return false
    }
    guard name == "$within" || name == "$nearSphere" || NCMBWhere.isOperand(operand) else {
      return false
    }
    var operators: [String: JSONValue] = [:]
    if let present = fields[field] {
      guard case .object(let given) = present, NCMBWhere.looksLikeOperators(present),
        given[name] == nil
      else { return false }
      operators = given
    }
    operators[name] = operand
    fields[field] = .object(operators)
    return true
  }

  private static func point(_ point: GeoPoint) -> JSONValue {
    .object([
      "__type": .string("GeoPoint"), "latitude": .double(point.latitude),
      "longitude": .double(point.longitude),
    ])
  }

  /// A field the parser reads as a field (not `$or`, `$relatedTo`…).
  private static func isName(_ field: String) -> Bool { !field.isEmpty && !field.hasPrefix("$") }

  private static func isObject(_ value: JSONValue) -> Bool {
    if case .object = value { return true }
    return false
  }

  /// A value the parser compares as it is: not an object it would read (a Date it turns into
  /// milliseconds, a pointer it shortens); a pointer already in the stored shape passes.
  private static func isOperand(_ value: JSONValue) -> Bool {
    guard case .object(let object) = value, object["__type"] != nil else { return true }
    if case .string(let className)? = object["className"],
      case .string(let objectId)? = object["objectId"]
    {
      return value == .pointer(className: className, objectId: objectId)
    }
    return false
  }

  /// An object the parser reads as operators (`{"$gt":…}`), not as a value.
  private static func looksLikeOperators(_ value: JSONValue) -> Bool {
    guard case .object(let object) = value, object["__type"] == nil else { return false }
    return object.keys.contains { $0.hasPrefix("$") }
  }
}
