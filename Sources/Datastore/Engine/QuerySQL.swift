#if canImport(Glibc)
  import Glibc
#else
  import Foundation
#endif

/// How an engine spells the leaves of a query over its JSON (SQLite's `json_type` and
/// `json_extract`, PostgreSQL's jsonb): the tree of conditions and the order are written once,
/// in `QuerySQL`, and every value is bound (`SQL`).
protocol QueryLeaves {
  /// True, and false, as the engine writes them.
  var always: SQL { get }
  var never: SQL { get }
  /// The field is `value`, type for type; a missing field is null. Never NULL.
  func equals(_ field: String, _ value: JSONValue) -> SQL
  /// A number with numbers, a string with strings (by code point). Never NULL.
  func compares(_ field: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue)
    -> SQL
  func exists(_ field: String, _ present: Bool) -> SQL
  /// The field is an array holding an element equal to one of `list` (not empty). Never NULL.
  func arrayHolds(_ field: String, _ list: [JSONValue]) -> SQL
  /// The field is an array holding an element equal to each of `list` (not empty). Never NULL.
  func arrayHoldsAll(_ field: String, _ list: [JSONValue]) -> SQL
  /// The field is a string matching the regular expression (`QueryCondition.matches`). Never
  /// NULL.
  func matches(_ field: String, _ pattern: String, _ options: String) -> SQL
  /// The number at a dotted path, or NULL when it holds anything else.
  func coordinate(_ path: String) -> SQL
  /// The path holds a number within `low...high`, written on the expression an index of the
  /// path would hold. May be NULL when the path holds none: only boxes use it, never negated.
  func numberWithin(_ path: String, _ low: Double, _ high: Double) -> SQL
  /// A floating-point value as the engine binds it.
  func real(_ value: Double) -> SQL
  /// The smaller of two numbers (`min` in SQLite, `least` in PostgreSQL).
  func smaller(_ first: SQL, _ second: SQL) -> SQL
  /// What a listing orders by for `field` (`presence`: flags ordered by whether they are set).
  func orderExpression(_ field: String, presence: Set<String>) -> SQL
  /// The row id, which breaks ties.
  var rowId: SQL { get }
}

extension QueryLeaves {
  /// One look through the array for each value: what an engine does when it has nothing better
  /// (the engines look once for lists of plain values).
  func arrayHoldsEach(_ field: String, _ list: [JSONValue]) -> SQL {
    "(\(sql: SQL.joined(list.map { arrayHolds(field, [$0]) }, separator: " AND ")))"
  }
}

/// The values of `$all`/`$inArray` that are numbers and strings, each kind without repeats
/// (1 and 1.0 are one number); nil when the list holds anything else, or an integer too large
/// for a double to tell apart.
struct PlainValues {
  var numbers: [JSONValue] = []
  var texts: [String] = []
  /// How many different values: an array holds them all when it holds that many of them.
  var distinctCount: Int { numbers.count + texts.count }

  init?(_ list: [JSONValue]) {
    var seenNumbers = Set<Double>()
    var seenTexts = Set<String>()
    for value in list {
      switch value {
      case .int(let number):
        guard number.magnitude <= 1 << 53 else { return nil }
        if seenNumbers.insert(Double(number)).inserted { numbers.append(value) }
      case .double(let number):
        if seenNumbers.insert(number).inserted { numbers.append(value) }
      case .string(let text):
        if seenTexts.insert(text).inserted { texts.append(text) }
      default: return nil
      }
    }
  }
}

/// The parts of a class query both engines share.
enum QuerySQL {
  /// One condition as a boolean SQL expression, never NULL: `NOT` of it means "does not match".
  static func condition(_ condition: QueryCondition, _ leaves: some QueryLeaves) -> SQL {
    switch condition {
    case .equal(let field, let value): return leaves.equals(field, value)
    case .notEqual(let field, let value): return "NOT \(sql: leaves.equals(field, value))"
    case .compare(let field, let comparison, let value):
      return leaves.compares(field, comparison, value)
    case .isIn(let field, let list): return anyEqual(field, list, leaves)
    case .notIn(let field, let list): return "NOT \(sql: anyEqual(field, list, leaves))"
    case .exists(let field, let present): return leaves.exists(field, present)
    case .arrayContainsAny(let field, let list):
      return list.isEmpty ? leaves.never : leaves.arrayHolds(field, list)
    case .arrayContainsAll(let field, let list):
      guard !list.isEmpty else { return leaves.never }
      return leaves.arrayHoldsAll(field, list)
    case .arrayContainsNone(let field, let list):
      return list.isEmpty ? leaves.always : "NOT \(sql: leaves.arrayHolds(field, list))"
    case .matches(let field, let pattern, let options):
      return leaves.matches(field, pattern, options)
    case .withinBox(let field, let southwest, let northeast):
      let latitude = leaves.numberWithin(
        field + ".latitude", southwest.latitude, northeast.latitude)
      let longitude: SQL
      if southwest.longitude <= northeast.longitude {
        longitude = leaves.numberWithin(
          field + ".longitude", southwest.longitude, northeast.longitude)
      } else {
        // Across the 180th meridian: east of the west edge or west of the east edge.
        longitude = """
          (\(sql: leaves.numberWithin(field + ".longitude", southwest.longitude, 180)) OR \
          \(sql: leaves.numberWithin(field + ".longitude", -180, northeast.longitude)))
          """
      }
      return "(\(sql: latitude) AND \(sql: longitude))"
    case .near(let field, let point, let maxRadians):
      return near(field, point, maxRadians, leaves)
    case .and(let parts):
      guard !parts.isEmpty else { return leaves.always }
      return SQL.balanced(parts.map { Self.condition($0, leaves) }, separator: " AND ")
    case .or(let parts):
      guard !parts.isEmpty else { return leaves.never }
      return SQL.balanced(parts.map { Self.condition($0, leaves) }, separator: " OR ")
    }
  }

  /// The great-circle distance in radians from `point` to the GeoPoint in `field` (haversine),
  /// NULL when the field holds no GeoPoint.
  static func distance(_ field: String, _ point: GeoPoint, _ leaves: some QueryLeaves) -> SQL {
    let latitude = leaves.coordinate(field + ".latitude")
    let longitude = leaves.coordinate(field + ".longitude")
    let lat0 = leaves.real(point.latitude * .pi / 180)
    let lon0 = leaves.real(point.longitude * .pi / 180)
    let cos0 = leaves.real(cos(point.latitude * .pi / 180))
    let half: SQL = """
      power(sin((radians(\(sql: latitude)) - \(sql: lat0)) / 2), 2) + \(sql: cos0) * \
      cos(radians(\(sql: latitude))) * power(sin((radians(\(sql: longitude)) - \(sql: lon0)) / 2), 2)
      """
    return "(2 * asin(sqrt(\(sql: leaves.smaller(half, leaves.real(1))))))"
  }

  /// Within `maxRadians` of `point`: first a box of latitudes (and of longitudes away from the
  /// poles) that an index of the coordinates can serve, then the distance itself.
  private static func near(
    _ field: String, _ point: GeoPoint, _ maxRadians: Double?, _ leaves: some QueryLeaves
  ) -> SQL {
    let distance = distance(field, point, leaves)
    // Both coordinates numbers (PostgreSQL's `least` would make a NULL distance a number).
    let isPoint: SQL = """
      (\(sql: leaves.coordinate(field + ".latitude")) IS NOT NULL AND \
      \(sql: leaves.coordinate(field + ".longitude")) IS NOT NULL)
      """
    guard let maxRadians else { return isPoint }
    let degrees = maxRadians * 180 / .pi
    var terms: [SQL] = [
      leaves.numberWithin(
        field + ".latitude", max(-90, point.latitude - degrees), min(90, point.latitude + degrees))
    ]
    let reach = cos(min(89.0, abs(point.latitude) + degrees) * .pi / 180)
    let spread = reach > 0 ? degrees / reach : 360
    if abs(point.latitude) + degrees < 89, spread < 180, abs(point.longitude) + spread <= 180 {
      terms.append(
        leaves.numberWithin(
          field + ".longitude", point.longitude - spread, point.longitude + spread))
    }
    terms.append(isPoint)
    terms.append(
      "coalesce(\(sql: distance) <= \(sql: leaves.real(maxRadians)), \(sql: leaves.never))")
    return "(\(sql: SQL.joined(terms, separator: " AND ")))"
  }

  private static func anyEqual(_ field: String, _ list: [JSONValue], _ leaves: some QueryLeaves)
    -> SQL
  {
    guard !list.isEmpty else { return leaves.never }
    return SQL.balanced(list.map { leaves.equals(field, $0) }, separator: " OR ")
  }

  /// `ORDER BY` the keys (`-field` descending), then the row id in the direction of the last
  /// key, which an index on the keys gives for free.
  static func order(
    _ order: [String], presence: Set<String> = [], nearest: (field: String, point: GeoPoint)? = nil,
    _ leaves: some QueryLeaves
  ) -> SQL {
    let keys = orderKeys(order, presence: presence, nearest: nearest, leaves).map { key -> SQL in
      key.descending ? "\(sql: key.expression) DESC" : key.expression
    }
    return "ORDER BY \(sql: SQL.joined(keys, separator: ", "))"
  }

  /// The keys of `order`: each field's expression and direction, then the row id.
  static func orderKeys(
    _ order: [String], presence: Set<String> = [], nearest: (field: String, point: GeoPoint)? = nil,
    _ leaves: some QueryLeaves
  ) -> [(expression: SQL, descending: Bool)] {
    var keys: [(expression: SQL, descending: Bool)] = []
    if let nearest { keys.append((distance(nearest.field, nearest.point, leaves), false)) }
    keys += order.map { key -> (expression: SQL, descending: Bool) in
      let descending = key.hasPrefix("-")
      let field = descending ? String(key.dropFirst()) : key
      return (leaves.orderExpression(field, presence: presence), descending)
    }
    keys.append((leaves.rowId, order.last?.hasPrefix("-") == true))
    return keys
  }
}
