import Datastore

/// The query parameters of NCMB's object search (`where`, `order`, `limit`, `skip`, `count`,
/// `include`) as a datastore `Query`.
enum NCMBQuery {
  /// Percent-decoded `name=value` pairs of a raw query string (`+` is a space).
  static func parameters(_ rawQuery: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for pair in rawQuery.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = try decode(String(parts[0]), field: "query")
      let value = parts.count > 1 ? try decode(String(parts[1]), field: name) : ""
      result[name] = value
    }
    return result
  }

  /// `%XX` and `+` decoded; invalid UTF-8 or a NUL is `E400002`.
  static func decode(_ text: String, field: String, plusIsSpace: Bool = true) throws -> String {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
      if byte == UInt8(ascii: "%") {
        guard let high = iterator.next(), let low = iterator.next(),
          let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
        else { throw NCMBError.invalid(field) }
        bytes.append(value)
      } else if byte == UInt8(ascii: "+") && plusIsSpace {
        bytes.append(UInt8(ascii: " "))
      } else {
        bytes.append(byte)
      }
    }
    guard let decoded = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
      throw NCMBError.invalid(field)
    }
    return decoded
  }

  /// What building one answer's objects may cost (`Query.costBudget`): 16 MiB of
  /// `JSONValue.readingCost`, so that the server's memory for an answer stays about that
  /// whatever was stored (1 MB of `[[0],[0],…]` costs 34 MiB to build and is refused whole).
  static let answerBudget = 16 * 1_048_576

  /// A search as the parameters ask it.
  struct Search {
    var query: Query
    /// `count=1`: the answer adds `"count"`.
    var withCount = false
    /// `limit=0`: no objects (the Swift SDK's `count()` sends `count=1&limit=0`; NCMB answered
    /// it with the count and no results, so a `limit=0` alone is an empty page).
    var listsNothing = false
  }

  /// `dates`: fields of the class the application stores as milliseconds and answers as
  /// NCMB's Dates (`NCMBPolicy.millisecondDates`): a Date compared with them is its
  /// milliseconds, as for `createDate`.
  static func query(
    className: String, _ parameters: [String: String], dates: Set<String> = []
  ) throws -> Search {
    var query = Query(className: className)
    query.costBudget = answerBudget
    var listsNothing = false
    if let text = parameters["where"], !text.isEmpty {
      guard case .object(let fields) = try NCMBJSON.parse(Array(text.utf8)) else {
        throw NCMBError.invalid("where")
      }
      query.conditions = try conditions(fields, dates: dates)
    }
    let order = parameters["order"].map { $0.split(separator: ",").map(String.init) } ?? []
    query.order = order.isEmpty ? ["-createDate"] : order
    if let limit = parameters["limit"] {
      guard let value = Int(limit), (0...Query.maximumLimit).contains(value) else {
        throw NCMBError.invalid("limit", "between 0 and \(Query.maximumLimit)")
      }
      if value == 0 { listsNothing = true } else { query.limit = value }
    }
    if let skip = parameters["skip"] {
      guard let value = Int(skip), value >= 0 else { throw NCMBError.invalid("skip") }
      query.skip = value
    }
    if let include = parameters["include"], !include.isEmpty {
      query.include = include.split(separator: ",").map(String.init)
    }
    let count: Bool
    switch parameters["count"] {
    case nil, "0": count = false
    case "1": count = true
    default: throw NCMBError.invalid("count")
    }
    return Search(query: query, withCount: count, listsNothing: listsNothing)
  }

  /// A `where` object: every key must hold.
  static func conditions(_ fields: [String: JSONValue], dates: Set<String> = []) throws
    -> [QueryCondition]
  {
    var result: [QueryCondition] = []
    for key in fields.keys.sorted() {
      let value = fields[key]!
      if key == "$or" {
        guard case .array(let alternatives) = value, !alternatives.isEmpty else {
          throw NCMBError.invalid("where", "$or takes an array of conditions")
        }
        result.append(
          .or(
            try alternatives.map { alternative in
              guard case .object(let inner) = alternative else {
                throw NCMBError.invalid("where", "$or takes an array of conditions")
              }
              return .and(try conditions(inner, dates: dates))
            }))
      } else if key.hasPrefix("$") {
        throw NCMBError.invalid("where", "\(key) is not supported")
      } else {
        result += try fieldConditions(key, value, dates)
      }
    }
    return result
  }

  private static func fieldConditions(
    _ field: String, _ value: JSONValue, _ dates: Set<String>
  ) throws -> [QueryCondition] {
    func operand(_ field: String, _ value: JSONValue) throws -> JSONValue {
      try NCMBQuery.operand(field, value, dates)
    }
    guard case .object(let operators) = value, operators["__type"] == nil,
      operators.keys.contains(where: { $0.hasPrefix("$") })
    else { return [.equal(field, try operand(field, value))] }
    var result: [QueryCondition] = []
    for name in operators.keys.sorted() {
      let argument = operators[name]!
      func list() throws -> [JSONValue] {
        guard case .array(let values) = argument else {
          throw NCMBError.invalid("where", "\(name) takes an array")
        }
        return try values.map { try operand(field, $0) }
      }
      switch name {
      case "$ne": result.append(.notEqual(field, try operand(field, argument)))
      case "$lt", "$lte", "$gt", "$gte":
        let comparison: QueryCondition.Comparison =
          [
            "$lt": .lessThan, "$lte": .lessThanOrEqual, "$gt": .greaterThan,
            "$gte": .greaterThanOrEqual,
          ][name]!
        result.append(try range(field, comparison, operand(field, argument)))
      case "$in": result.append(.isIn(field, try list()))
      case "$nin": result.append(.notIn(field, try list()))
      case "$exists":
        guard case .bool(let present) = argument else {
          throw NCMBError.invalid("where", "$exists takes true or false")
        }
        result.append(.exists(field, present))
      case "$inArray":
        // The SDKs send an array; a single value means that value.
        if case .array = argument {
          result.append(.arrayContainsAny(field, try list()))
        } else {
          result.append(.arrayContainsAny(field, [try operand(field, argument)]))
        }
      case "$all": result.append(.arrayContainsAll(field, try list()))
      case "$regex":
        throw NCMBError.invalid("where", "regular expressions are not supported")
      default:
        throw NCMBError.invalid("where", "\(name) is not supported")
      }
    }
    return result
  }

  /// A value to compare with: a Date on the built-in dates is their milliseconds; a pointer is
  /// normalised to the three keys the backend stores.
  private static func operand(_ field: String, _ value: JSONValue, _ dates: Set<String>) throws
    -> JSONValue
  {
    guard case .object(let object) = value, let type = object["__type"]?.stringValue else {
      return value
    }
    switch type {
    case "Pointer":
      guard let className = object["className"]?.stringValue,
        let objectId = object["objectId"]?.stringValue
      else { throw NCMBError.invalid("where", "a pointer needs className and objectId") }
      return .pointer(className: className, objectId: objectId)
    case "Date":
      guard let iso = object["iso"]?.stringValue,
        let milliseconds = NCMBSignature.milliseconds(ofTimestamp: iso), iso.hasSuffix("Z")
      else { throw NCMBError.invalid("where", "a date needs iso") }
      if field == "createDate" || field == "updateDate" || dates.contains(field) {
        return .int(milliseconds)
      }
      return .object(["__type": .string("Date"), "iso": .string(iso)])
    default: return value
    }
  }

  /// `value` is the operand already read (`operand`).
  private static func range(
    _ field: String, _ comparison: QueryCondition.Comparison, _ value: JSONValue
  ) throws -> QueryCondition {
    // A date inside an object is compared by its iso text, which sorts as the time does.
    if case .object(let date) = value, let iso = date["iso"] {
      return .compare(field + ".iso", comparison, iso)
    }
    return .compare(field, comparison, value)
  }
}
