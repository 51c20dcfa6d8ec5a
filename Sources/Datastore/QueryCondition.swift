/// A condition of a `Query` beyond `equalTo`: the operators of the backend's `where` (NCMB's
/// `$ne $lt $lte $gt $gte $in $nin $exists $inArray $all $or`). Both engines render the tree into
/// SQL with every value bound, never spliced. Matching is type-exact: `1` never matches `"1"` or
/// `true`, a range compares numbers with numbers and strings with strings (by code point), and
/// a missing field is null for `equal`, matches `notEqual`/`notIn`, and fails everything else.
public indirect enum QueryCondition: Equatable, Sendable {
  public enum Comparison: String, Sendable {
    case lessThan = "<"
    case lessThanOrEqual = "<="
    case greaterThan = ">"
    case greaterThanOrEqual = ">="
  }

  case equal(String, JSONValue)
  case notEqual(String, JSONValue)
  /// The value is a number or a string; only values of the same kind compare.
  case compare(String, Comparison, JSONValue)
  case isIn(String, [JSONValue])
  case notIn(String, [JSONValue])
  /// `true`: the field is present (a stored null counts as present).
  case exists(String, Bool)
  /// The field is an array holding at least one of the values (`$inArray`).
  case arrayContainsAny(String, [JSONValue])
  /// The field is an array holding every one of the values (`$all`); none given matches nothing.
  case arrayContainsAll(String, [JSONValue])
  /// The field is not an array holding any of the values (`$ninArray`): a missing field or one
  /// that is not an array matches.
  case arrayContainsNone(String, [JSONValue])
  /// The field is a string matching `pattern` (`$regex`), a regular expression as PCRE and
  /// PostgreSQL both read it; `options` is a set of `i` (case), `m` (lines), `x` (spaces),
  /// `s` (a dot matches a line break, which it always does here).
  case matches(String, pattern: String, options: String)
  /// The field is a GeoPoint (`latitude`, `longitude`) inside the box, edges included
  /// (`$within` `$box`): a `west` east of `east` crosses the 180th meridian.
  case withinBox(String, southwest: GeoPoint, northeast: GeoPoint)
  /// The field is a GeoPoint at most `maxRadians` of a great circle from `point` (nil: any
  /// distance). With `Query.nearest` the answer is ordered nearest first (`$nearSphere`).
  case near(String, GeoPoint, maxRadians: Double?)
  /// Every condition holds.
  case and([QueryCondition])
  /// At least one condition holds (`$or`).
  case or([QueryCondition])

  /// The longest `$regex` pattern, in bytes.
  public static let maximumPatternBytes = 512

  /// Nodes in one query's conditions, values in their lists, and nesting of `and`/`or`.
  public static let maximumNodes = 200
  public static let maximumValues = 1000
  public static let maximumDepth = 4

  /// The built-in columns a condition may name besides the object's own fields.
  static let builtInFields: Set<String> = ["objectId", "createDate", "updateDate"]
}

/// A point on the earth in degrees (NCMB's `{"__type":"GeoPoint","latitude","longitude"}`).
public struct GeoPoint: Equatable, Sendable {
  public var latitude: Double
  public var longitude: Double

  public init(latitude: Double, longitude: Double) {
    self.latitude = latitude
    self.longitude = longitude
  }

  /// The mean radius of the earth the distances use: kilometres and miles per radian.
  public static let kilometresPerRadian = 6371.0
  public static let milesPerRadian = 3958.8

  /// Latitude within ±90 and longitude within ±180.
  public var isValid: Bool {
    latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
  }
}

extension DatastoreClient {
  /// Checks a query's conditions before any engine sees them: names, values, sizes.
  static func validate(conditions: [QueryCondition]) throws {
    var nodes = 0
    var values = 0
    func field(_ name: String) throws {
      guard isFieldPath(name) else { throw DatastoreError.invalid("where") }
    }
    func value(_ value: JSONValue) throws {
      try validate(fields: ["where": value])
    }
    func list(_ name: String, _ list: [JSONValue]) throws {
      try field(name)
      values += list.count
      guard values <= QueryCondition.maximumValues else {
        throw DatastoreError.invalid("where", "more than \(QueryCondition.maximumValues) values")
      }
      for item in list { try value(item) }
    }
    func walk(_ condition: QueryCondition, depth: Int) throws {
      nodes += 1
      guard nodes <= QueryCondition.maximumNodes else {
        throw DatastoreError.invalid("where", "more than \(QueryCondition.maximumNodes) conditions")
      }
      switch condition {
      case .equal(let name, let given), .notEqual(let name, let given):
        try field(name)
        try value(given)
      case .compare(let name, _, let given):
        try field(name)
        switch given {
        case .int, .double, .string: try value(given)
        default: throw DatastoreError.invalid("where", "a range needs a number or a string")
        }
      case .isIn(let name, let given), .notIn(let name, let given),
        .arrayContainsAny(let name, let given), .arrayContainsAll(let name, let given):
        try list(name, given)
      case .arrayContainsNone(let name, let given): try list(name, given)
      case .exists(let name, _): try field(name)
      case .matches(let name, let pattern, let options):
        try field(name)
        guard pattern.utf8.count <= QueryCondition.maximumPatternBytes else {
          throw DatastoreError.invalid(
            "where", "$regex longer than \(QueryCondition.maximumPatternBytes) bytes")
        }
        guard !pattern.utf8.contains(0) else { throw DatastoreError.invalid("where") }
        guard options.allSatisfy({ "imsx".contains($0) }) else {
          throw DatastoreError.invalid("where", "$options takes only i, m, s and x")
        }
      case .withinBox(let name, let southwest, let northeast):
        try field(name)
        guard southwest.isValid, northeast.isValid, southwest.latitude <= northeast.latitude
        else {
          throw DatastoreError.invalid("where", "$box takes a southwest and a northeast point")
        }
      case .near(let name, let point, let maxRadians):
        try field(name)
        guard point.isValid, maxRadians.map({ $0.isFinite && $0 >= 0 }) ?? true else {
          throw DatastoreError.invalid("where", "$nearSphere takes a GeoPoint and a distance")
        }
      case .and(let parts), .or(let parts):
        guard depth < QueryCondition.maximumDepth else {
          throw DatastoreError.invalid(
            "where", "nested more than \(QueryCondition.maximumDepth) deep")
        }
        if case .or = condition, parts.isEmpty { throw DatastoreError.invalid("where") }
        for part in parts { try walk(part, depth: depth + 1) }
      }
    }
    for condition in conditions { try walk(condition, depth: 0) }
  }
}
