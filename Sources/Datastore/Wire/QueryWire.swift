/// `Query` and its `QueryCondition`s on the wire: each condition a tagged array
/// (`["=", field, value]`, `["and", [...]]`), so every condition the engines take crosses
/// whole; the server checks the query as it checks any client's (`DatastoreClient.validate`).
extension Query {
  public var wire: JSONValue {
    var body: [String: JSONValue] = [
      "className": .string(className), "equalTo": .object(equalTo), "order": .strings(order),
      "limit": .int(Int64(limit)), "skip": .int(Int64(skip)), "include": .strings(include),
      "greaterThan": .object(greaterThan.mapValues(JSONValue.int)),
      "lessThan": .object(lessThan.mapValues(JSONValue.int)),
      "unreadOnly": .bool(unreadOnly), "conditions": .array(conditions.map(\.wire)),
    ]
    if let nearest {
      body["nearest"] = .object(["field": .string(nearest.field), "point": nearest.point.wire])
    }
    if let keys { body["keys"] = .strings(keys.sorted()) }
    if let includeKeys { body["includeKeys"] = .strings(includeKeys.sorted()) }
    if let costBudget { body["costBudget"] = .int(Int64(costBudget)) }
    return .object(body)
  }

  public init(wire value: JSONValue) throws {
    let object = try WireObject(value, "query")
    self.init(
      className: try object.string("className"), equalTo: try object.object("equalTo"),
      order: try object.strings("order"), limit: try object.count("limit"),
      skip: try object.count("skip"), include: try object.strings("include"))
    func whole(_ key: String) throws -> [String: Int64] {
      try object.object(key).mapValues {
        guard case .int(let value) = $0 else { throw Wire.malformed("query.\(key)") }
        return value
      }
    }
    greaterThan = try whole("greaterThan")
    lessThan = try whole("lessThan")
    unreadOnly = try object.bool("unreadOnly")
    conditions = try object.array("conditions").map { try QueryCondition(wire: $0, depth: 0) }
    if let nearest = object["nearest"] {
      let near = try WireObject(nearest, "query.nearest")
      self.nearest = (try near.string("field"), try GeoPoint(wire: near["point"]))
    }
    if object["keys"] != nil { keys = Set(try object.strings("keys")) }
    if object["includeKeys"] != nil { includeKeys = Set(try object.strings("includeKeys")) }
    if let budget = try object.optionalInt("costBudget") {
      guard budget >= 0, budget <= Int64(Int32.max) else { throw Wire.malformed("costBudget") }
      costBudget = Int(budget)
    }
  }
}

extension GeoPoint {
  var wire: JSONValue { .array([.double(latitude), .double(longitude)]) }

  init(wire value: JSONValue?) throws {
    guard case .array(let parts)? = value, parts.count == 2,
      let latitude = parts[0].doubleValue, let longitude = parts[1].doubleValue
    else { throw Wire.malformed("GeoPoint") }
    self.init(latitude: latitude, longitude: longitude)
  }
}

extension QueryCondition {
  var wire: JSONValue {
    switch self {
    case .equal(let field, let value): .array([.string("="), .string(field), value])
    case .notEqual(let field, let value): .array([.string("!="), .string(field), value])
    case .compare(let field, let comparison, let value):
      .array([.string(comparison.rawValue), .string(field), value])
    case .isIn(let field, let values): .array([.string("in"), .string(field), .array(values)])
    case .notIn(let field, let values): .array([.string("nin"), .string(field), .array(values)])
    case .exists(let field, let exists): .array([.string("exists"), .string(field), .bool(exists)])
    case .arrayContainsAny(let field, let values):
      .array([.string("any"), .string(field), .array(values)])
    case .arrayContainsAll(let field, let values):
      .array([.string("all"), .string(field), .array(values)])
    case .arrayContainsNone(let field, let values):
      .array([.string("none"), .string(field), .array(values)])
    case .matches(let field, let pattern, let options):
      .array([.string("regex"), .string(field), .string(pattern), .string(options)])
    case .withinBox(let field, let southwest, let northeast):
      .array([.string("box"), .string(field), southwest.wire, northeast.wire])
    case .near(let field, let point, let maxRadians):
      .array([
        .string("near"), .string(field), point.wire, maxRadians.map(JSONValue.double) ?? .null,
      ])
    case .and(let parts): .array([.string("and"), .array(parts.map(\.wire))])
    case .or(let parts): .array([.string("or"), .array(parts.map(\.wire))])
    }
  }

  init(wire value: JSONValue, depth: Int) throws {
    guard depth <= QueryCondition.maximumDepth, case .array(let parts) = value,
      let tag = parts.first?.stringValue
    else { throw Wire.malformed("condition") }
    func field() throws -> String {
      guard parts.count >= 3, let name = parts[1].stringValue else {
        throw Wire.malformed("condition")
      }
      return name
    }
    func list() throws -> [JSONValue] {
      guard case .array(let values) = parts[2] else { throw Wire.malformed("condition") }
      return values
    }
    func nested() throws -> [QueryCondition] {
      guard parts.count == 2, case .array(let values) = parts[1] else {
        throw Wire.malformed("condition")
      }
      return try values.map { try QueryCondition(wire: $0, depth: depth + 1) }
    }
    switch tag {
    case "=": self = .equal(try field(), parts[2])
    case "!=": self = .notEqual(try field(), parts[2])
    case "in": self = .isIn(try field(), try list())
    case "nin": self = .notIn(try field(), try list())
    case "any": self = .arrayContainsAny(try field(), try list())
    case "all": self = .arrayContainsAll(try field(), try list())
    case "none": self = .arrayContainsNone(try field(), try list())
    case "exists":
      guard case .bool(let exists) = parts.count == 3 ? parts[2] : .null else {
        throw Wire.malformed("condition")
      }
      self = .exists(try field(), exists)
    case "regex":
      guard parts.count == 4, let pattern = parts[2].stringValue,
        let options = parts[3].stringValue
      else { throw Wire.malformed("condition") }
      self = .matches(try field(), pattern: pattern, options: options)
    case "box":
      guard parts.count == 4 else { throw Wire.malformed("condition") }
      self = .withinBox(
        try field(), southwest: try GeoPoint(wire: parts[2]),
        northeast: try GeoPoint(wire: parts[3]))
    case "near":
      guard parts.count == 4 else { throw Wire.malformed("condition") }
      self = .near(
        try field(), try GeoPoint(wire: parts[2]),
        maxRadians: parts[3] == .null
          ? nil : try parts[3].doubleValue ?? { throw Wire.malformed("condition") }())
    case "and": self = .and(try nested())
    case "or": self = .or(try nested())
    default:
      guard let comparison = Comparison(rawValue: tag) else { throw Wire.malformed("condition") }
      self = .compare(try field(), comparison, parts[2])
    }
  }
}
