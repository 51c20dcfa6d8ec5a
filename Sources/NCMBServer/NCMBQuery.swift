import Datastore

/// The query parameters of NCMB's object search (`where`, `order`, `limit`, `skip`, `count`,
/// `include`) as a datastore `Query`.
enum NCMBQuery {
  /// Percent-decoded `name=value` pairs of a raw query string (`+` is a space). Split on the
  /// query's bytes: `&` and `=` are ASCII, and splitting by Character (grapheme breaking) cost
  /// a tenth of a served find.
  static func parameters(_ rawQuery: String) throws -> [String: String] {
    var result: [String: String] = [:]
    try pairs(of: rawQuery) { name, value in
      let name = try decode(name, field: "query")
      result[name] = try value.map { try decode($0, field: name) } ?? ""
      return false
    }
    return result
  }

  /// Each non-empty `name=value` piece between `&`s of a raw query string, as its bytes (the
  /// value nil without `=`), until `body` says it is done.
  private static func pairs(
    of rawQuery: String,
    _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>?) throws -> Bool
  ) rethrows {
    var rawQuery = rawQuery
    try rawQuery.withUTF8 { bytes in
      var start = 0
      while start < bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
        if end > start {
          var equals = start
          while equals < end && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
          let name = UnsafeBufferPointer(rebasing: bytes[start..<equals])
          let value = equals < end ? UnsafeBufferPointer(rebasing: bytes[equals + 1..<end]) : nil
          if try body(name, value) { return }
        }
        start = end + 1
      }
    }
  }

  /// Whether the raw query string names `name` (as `parameters` would read it), decoding only
  /// the names: a cached request's check stays off its `where` (every cacheable GET asks it,
  /// kept or not).
  static func names(_ name: String, in rawQuery: String) -> Bool {
    var name = name
    return name.withUTF8 { wanted in
      var found = false
      pairs(of: rawQuery) { given, _ in
        found = names(wanted, given)
        return found
      }
      return found
    }
  }

  /// Whether a parameter's name as sent is `wanted`: byte for byte when it is plain ASCII,
  /// else decoded and compared as text (canonically equal names are one parameter).
  private static func names(
    _ wanted: UnsafeBufferPointer<UInt8>, _ given: UnsafeBufferPointer<UInt8>
  )
    -> Bool
  {
    let plain = !given.contains {
      $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") || $0 >= 0x80
    }
    if plain && !wanted.contains(where: { $0 >= 0x80 }) { return given.elementsEqual(wanted) }
    return (try? decode(given, field: "query")) == String(decoding: wanted, as: UTF8.self)
  }

  /// `%XX` and `+` decoded; invalid UTF-8 or a NUL is `E400002`.
  static func decode(_ text: some StringProtocol, field: String, plusIsSpace: Bool = true) throws
    -> String
  {
    var text = String(text)
    return try text.withUTF8 { try decode($0, field: field, plusIsSpace: plusIsSpace) }
  }

  /// `decode` of UTF-8 bytes: text with nothing to decode is taken as it stands.
  static func decode(_ text: UnsafeBufferPointer<UInt8>, field: String, plusIsSpace: Bool = true)
    throws -> String
  {
    let plus = plusIsSpace ? UInt8(ascii: "+") : UInt8(ascii: "%")
    guard text.contains(where: { $0 == UInt8(ascii: "%") || $0 == plus || $0 == 0 }) else {
      guard let plain = String(validating: text, as: UTF8.self) else {
        throw NCMBError.invalid(field)
      }
      return plain
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.count)
    var index = 0
    while index < text.count {
      let byte = text[index]
      index += 1
      if byte == UInt8(ascii: "%") {
        // Digit by digit: the SDKs escape every brace and quote of a `where`.
        guard index + 1 < text.count, let high = hexDigit(text[index]),
          let low = hexDigit(text[index + 1])
        else { throw NCMBError.invalid(field) }
        bytes.append(high << 4 | low)
        index += 2
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

  private static func hexDigit(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
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
    /// The board's `unreadUpTo=N` (1…1000): the answer adds `"unread"`, the caller's read state
    /// in each object found, as `POST forum/unread` gives it, counting up to N.
    var unreadUpTo: Int?
  }

  /// How `$inQuery`, `$select` and `$relatedTo` read the other objects they name: as the
  /// caller, so a subquery sees only what the caller may read (its own finds and gets).
  struct Subqueries {
    var find: (Query) throws -> [DataObject]
    var get: (_ className: String, _ objectId: String) throws -> DataObject?
    /// `NCMBPolicy.millisecondDates` of a class.
    var dates: (String) -> Set<String> = { _ in [] }
  }

  /// Objects one subquery may name: its answer is a list of values, bounded as any list.
  static let maximumSubqueryObjects = 1000
  /// Subqueries inside subqueries.
  static let maximumSubqueryDepth = 2

  /// What one `where` asks beside its conditions (`$nearSphere`'s order).
  private final class Reading {
    let subqueries: Subqueries?
    let depth: Int
    var nearest: (field: String, point: GeoPoint)?
    init(_ subqueries: Subqueries?, depth: Int) {
      self.subqueries = subqueries
      self.depth = depth
    }
  }

  /// `dates`: fields of the class the application stores as milliseconds and answers as
  /// NCMB's Dates (`NCMBPolicy.millisecondDates`): a Date compared with them is its
  /// milliseconds, as for `createDate`.
  static func query(
    className: String, _ parameters: [String: String], dates: Set<String> = [],
    subqueries: Subqueries? = nil
  ) throws -> Search {
    var query = Query(className: className)
    query.costBudget = answerBudget
    var listsNothing = false
    if let text = parameters["where"], !text.isEmpty {
      guard case .object(let fields) = try NCMBJSON.parse(Array(text.utf8)) else {
        throw NCMBError.invalid("where")
      }
      let reading = Reading(subqueries, depth: 0)
      query.conditions = try conditions(fields, dates: dates, reading)
      query.nearest = reading.nearest
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
    // The board's parameter beside NCMB's (forum's remote engine sends it): only these fields
    // of the included objects are read.
    if let keys = parameters["includeKeys"] {
      let names = keys.split(separator: ",").map(String.init)
      guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("$") }) else {
        throw NCMBError.invalid("includeKeys")
      }
      query.includeKeys = Set(names)
    }
    let count: Bool
    switch parameters["count"] {
    case nil, "0": count = false
    case "1": count = true
    default: throw NCMBError.invalid("count")
    }
    var unreadUpTo: Int?
    if let text = parameters["unreadUpTo"] {
      guard let value = Int(text), (1...UnreadState.countLimit).contains(value) else {
        throw NCMBError.invalid("unreadUpTo", "between 1 and \(UnreadState.countLimit)")
      }
      unreadUpTo = value
    }
    return Search(
      query: query, withCount: count, listsNothing: listsNothing, unreadUpTo: unreadUpTo)
  }

  /// A `where` object: every key must hold.
  static func conditions(_ fields: [String: JSONValue], dates: Set<String> = []) throws
    -> [QueryCondition]
  {
    try conditions(fields, dates: dates, Reading(nil, depth: 0))
  }

  private static func conditions(
    _ fields: [String: JSONValue], dates: Set<String>, _ reading: Reading
  ) throws -> [QueryCondition] {
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
              return .and(try conditions(inner, dates: dates, reading))
            }))
      } else if key == "$relatedTo" {
        result.append(try relatedTo(value, reading))
      } else if key.hasPrefix("$") {
        throw NCMBError.invalid("where", "\(key) is not supported")
      } else {
        result += try fieldConditions(key, value, dates, reading)
      }
    }
    return result
  }

  private static func fieldConditions(
    _ field: String, _ value: JSONValue, _ dates: Set<String>, _ reading: Reading
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
      case "$ninArray":
        if case .array = argument {
          result.append(.arrayContainsNone(field, try list()))
        } else {
          result.append(.arrayContainsNone(field, [try operand(field, argument)]))
        }
      case "$regex":
        guard case .string(let pattern) = argument else {
          throw NCMBError.invalid("where", "$regex takes a string")
        }
        var options = ""
        if let given = operators["$options"] {
          guard case .string(let text) = given, text.allSatisfy({ "imsx".contains($0) }) else {
            throw NCMBError.invalid("where", "$options takes only i, m, s and x")
          }
          options = text
        }
        result.append(.matches(field, pattern: pattern, options: options))
      case "$options":
        guard operators["$regex"] != nil else {
          throw NCMBError.invalid("where", "$options goes with $regex")
        }
      case "$nearSphere":
        let point = try geoPoint(argument, "$nearSphere")
        var radians: Double? = nil
        let units: [(String, Double)] = [
          ("$maxDistanceInRadians", 1), ("$maxDistanceInKilometers", GeoPoint.kilometresPerRadian),
          ("$maxDistanceInMiles", GeoPoint.milesPerRadian),
        ]
        for (unit, perRadian) in units {
          guard let distance = operators[unit] else { continue }
          guard let number = distance.doubleValue, number.isFinite, number >= 0, radians == nil
          else { throw NCMBError.invalid("where", "\(unit) takes one distance") }
          radians = number / perRadian
        }
        result.append(.near(field, point, maxRadians: radians))
        guard reading.nearest == nil else {
          throw NCMBError.invalid("where", "one $nearSphere a query")
        }
        reading.nearest = (field, point)
      case "$maxDistanceInRadians", "$maxDistanceInKilometers", "$maxDistanceInMiles":
        guard operators["$nearSphere"] != nil else {
          throw NCMBError.invalid("where", "\(name) goes with $nearSphere")
        }
      case "$within":
        guard case .object(let within) = argument, within.count == 1,
          case .array(let corners)? = within["$box"], corners.count == 2
        else { throw NCMBError.invalid("where", "$within takes a $box of two GeoPoints") }
        let southwest = try geoPoint(corners[0], "$box")
        let northeast = try geoPoint(corners[1], "$box")
        result.append(.withinBox(field, southwest: southwest, northeast: northeast))
      case "$inQuery":
        let (inner, objects) = try subquery(argument, reading, keys: [])
        result.append(
          .isIn(field, objects.map { .pointer(className: inner, objectId: $0.objectId) }))
      case "$select":
        guard case .object(let select) = argument, case .string(let key)? = select["key"],
          let query = select["query"]
        else { throw NCMBError.invalid("where", "$select takes a query and a key") }
        let (_, objects) = try subquery(query, reading, keys: [key])
        var values: [JSONValue] = []
        for object in objects {
          let value: JSONValue? =
            switch key {
            case "objectId": .string(object.objectId)
            default: object.fields[key]
            }
          if let value, !values.contains(value) { values.append(value) }
        }
        result.append(.isIn(field, values))
      default:
        throw NCMBError.invalid("where", "\(name) is not supported")
      }
    }
    return result
  }

  /// `{"__type":"GeoPoint","latitude","longitude"}` (the type may be left out).
  private static func geoPoint(_ value: JSONValue, _ name: String) throws -> GeoPoint {
    guard case .object(let object) = value,
      object["__type"] == nil || object["__type"] == .string("GeoPoint"),
      let latitude = object["latitude"]?.doubleValue,
      let longitude = object["longitude"]?.doubleValue
    else { throw NCMBError.invalid("where", "\(name) takes a GeoPoint") }
    let point = GeoPoint(latitude: latitude, longitude: longitude)
    guard point.isValid else {
      throw NCMBError.invalid("where", "a GeoPoint's latitude is within ±90, longitude ±180")
    }
    return point
  }

  /// The objects a subquery (`{"className","where"}`) finds as the caller, at most
  /// `maximumSubqueryObjects` (more is refused, never cut short), reading only `keys`.
  private static func subquery(_ value: JSONValue, _ reading: Reading, keys: Set<String>)
    throws -> (className: String, objects: [DataObject])
  {
    guard let subqueries = reading.subqueries else {
      throw NCMBError.invalid("where", "subqueries are not supported here")
    }
    guard reading.depth < maximumSubqueryDepth else {
      throw NCMBError.invalid("where", "subqueries nested more than \(maximumSubqueryDepth) deep")
    }
    guard case .object(let inner) = value, case .string(let className)? = inner["className"],
      !ObjectsController.systemClasses.contains(className)
    else { throw NCMBError.invalid("where", "a subquery takes the className of an app's class") }
    var query = Query(className: className, limit: maximumSubqueryObjects)
    query.keys = keys
    query.costBudget = answerBudget
    if let given = inner["where"] {
      guard case .object(let fields) = given else { throw NCMBError.invalid("where") }
      let nested = Reading(subqueries, depth: reading.depth + 1)
      query.conditions = try conditions(fields, dates: subqueries.dates(className), nested)
    }
    // One more than the limit tells a full answer from one cut short.
    query.limit = maximumSubqueryObjects
    var found = try subqueries.find(query)
    if found.count == maximumSubqueryObjects {
      query.skip = maximumSubqueryObjects
      query.limit = 1
      query.keys = []
      found += try subqueries.find(query)
    }
    guard found.count <= maximumSubqueryObjects else {
      throw NCMBError.invalid(
        "where", "a subquery finds more than \(maximumSubqueryObjects) objects")
    }
    return (className, found)
  }

  /// `{"$relatedTo":{"object":<pointer>,"key":"field"}}`: the objects of the query's class in
  /// that object's relation, read as the caller (an owner it cannot read relates nothing).
  private static func relatedTo(_ value: JSONValue, _ reading: Reading) throws -> QueryCondition {
    guard let subqueries = reading.subqueries else {
      throw NCMBError.invalid("where", "$relatedTo is not supported here")
    }
    guard case .object(let related) = value, case .string(let key)? = related["key"],
      case .object(let owner)? = related["object"],
      let className = owner["className"]?.stringValue,
      let objectId = owner["objectId"]?.stringValue
    else { throw NCMBError.invalid("where", "$relatedTo takes an object pointer and a key") }
    guard !ObjectsController.systemClasses.contains(className),
      let found = try subqueries.get(className, objectId),
      case .object(let relation)? = found.fields[key],
      relation["__type"] == .string("Relation"), case .array(let members)? = relation["objects"]
    else { return .isIn("objectId", []) }
    let ids = members.compactMap { member -> JSONValue? in
      guard case .object(let pointer) = member, let id = pointer["objectId"]?.stringValue else {
        return nil
      }
      return .string(id)
    }
    return .isIn("objectId", ids)
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
