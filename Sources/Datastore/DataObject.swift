/// An object of a class, as the backend returns it.
public struct DataObject: Equatable, Sendable {
  public let className: String
  public let objectId: String
  /// Milliseconds since 1970 (UTC).
  public let createDate: Int64
  public let updateDate: Int64
  public let acl: ACL
  public let fields: [String: JSONValue]
  /// Objects that pointer fields point at, when the query asked to `include` them.
  public var included: [String: DataObject] = [:]
  /// True when the stored row's fields could not be read (written by another program: not a
  /// JSON object); `fields` is then empty.
  public var isDamaged = false

  public init(
    className: String, objectId: String, createDate: Int64, updateDate: Int64, acl: ACL,
    fields: [String: JSONValue]
  ) {
    self.className = className
    self.objectId = objectId
    self.createDate = createDate
    self.updateDate = updateDate
    self.acl = acl
    self.fields = fields
  }

  public subscript(field: String) -> JSONValue? { fields[field] }

  /// The object in the backend's REST shape: its fields plus `objectId`, dates and `acl`.
  public var json: JSONValue {
    var body = fields
    for (key, object) in included {
      var nested = object.json.objectValue ?? [:]
      nested["__type"] = .string("Object")
      nested["className"] = .string(object.className)
      body[key] = .object(nested)
    }
    body["objectId"] = .string(objectId)
    body["createDate"] = .string(BackendDate.string(milliseconds: createDate))
    body["updateDate"] = .string(BackendDate.string(milliseconds: updateDate))
    body["acl"] = acl.json
    return .object(body)
  }
}

/// Metadata of a stored file.
public struct FileInfo: Equatable, Sendable {
  public let fileName: String
  public let mimeType: String
  public let fileSize: Int
  public let createDate: Int64
  public let updateDate: Int64
  public let acl: ACL

  public var json: JSONValue {
    .object([
      "fileName": .string(fileName), "mimeType": .string(mimeType),
      "fileSize": .int(Int64(fileSize)),
      "createDate": .string(BackendDate.string(milliseconds: createDate)),
      "updateDate": .string(BackendDate.string(milliseconds: updateDate)), "acl": acl.json,
    ])
  }
}

/// A find: equality and further conditions, order, paging, and pointers to include.
public struct Query: Sendable {
  public var className: String
  /// Field (or dotted path into an object field) to the value it must equal.
  public var equalTo: [String: JSONValue]
  /// Field names, `-` first for descending. Ties fall back to creation order.
  public var order: [String]
  public var limit: Int
  public var skip: Int
  /// Pointer fields whose targets come back in `DataObject.included`.
  public var include: [String]
  /// Field to a whole number its value must be above, or below. With `order` on that field, a
  /// page that starts right after a known key: the engine seeks its index there instead of
  /// stepping over the rows before it (keyset paging, flat however deep the page).
  public var greaterThan: [String: Int64] = [:]
  public var lessThan: [String: Int64] = [:]
  /// Only parents (of a `ChildRule`) the caller has something unread in: children numbered above
  /// the caller's read position, or, never opened, someone else's. A prefilter an engine applies
  /// while it walks the listing's index; `DatastoreClient.unread` gives the exact counts.
  public var unreadOnly = false
  /// Further conditions, all of which must hold (`QueryCondition`).
  public var conditions: [QueryCondition] = []
  /// The answer is ordered by the distance of this GeoPoint field from the point, nearest
  /// first, before `order` (`$nearSphere`).
  public var nearest: (field: String, point: GeoPoint)? = nil
  /// Only these top-level fields of each object are read, the others stepped over unbuilt (a
  /// listing that shows two fields of a user pays nothing for a big user object); nil: all.
  public var keys: Set<String>? = nil
  /// `keys` for the objects `include` brings.
  public var includeKeys: Set<String>? = nil
  /// The most building the answer's objects may cost (`JSONValue.readingCost` of each stored
  /// object, included ones too); past it the find is `E400002` on `limit`, before anything
  /// over it is built. nil: no bound (the board's own reads, whose fields it checks).
  public var costBudget: Int? = nil

  public static let defaultLimit = 100
  public static let maximumLimit = 1000
  /// Fields one `order` may name.
  public static let maximumOrderFields = 16

  public init(
    className: String, equalTo: [String: JSONValue] = [:], order: [String] = [],
    limit: Int = Query.defaultLimit, skip: Int = 0, include: [String] = [],
    includeKeys: Set<String>? = nil
  ) {
    self.className = className
    self.equalTo = equalTo
    self.order = order
    self.limit = limit
    self.skip = skip
    self.include = include
    self.includeKeys = includeKeys
  }
}

/// An index a caller wants on a class: the fields, in order, it will filter and sort by; or, for
/// `.text`, the string fields `DatastoreClient.search` looks in.
public struct IndexSpec: Hashable, Sendable {
  public enum Kind: Hashable, Sendable {
    /// Equality and order on `fields`, in that order.
    case ordered
    /// Full-text search over the string fields `fields` (any order).
    case text
    /// The GeoPoint in `fields[0]`, for `$within`/`$box` and `$nearSphere` with a distance.
    case geo
  }

  public let className: String
  public let fields: [String]
  public let kind: Kind

  public init(className: String, fields: [String]) {
    self.className = className
    self.fields = fields
    kind = .ordered
  }

  /// A full-text index: `search` finds objects of `className` by words in `fields`.
  public init(textOf className: String, fields: [String]) {
    self.className = className
    self.fields = fields
    kind = .text
  }

  /// A GeoPoint index: boxes and distances on `field` of `className` seek its coordinates.
  public init(geoOf className: String, field: String) {
    self.className = className
    fields = [field]
    kind = .geo
  }

  /// The longest GeoPoint field a geo index takes: PostgreSQL names a column after it
  /// (`geo_<field>_lat`), and names longer than 63 bytes would be cut into one another.
  public static let geoFieldBytes = 48
}

/// A change to an array field made in the engine, atomically (NCMB's `Add`, `AddUnique`,
/// `Remove`, `AddRelation`, `RemoveRelation`). A relation lives in its owner's data as
/// `{"__type":"Relation","className":X,"objects":[pointers…]}`.
public enum ArrayChange: Equatable, Sendable {
  /// Appends the values (a missing field is an empty array).
  case add([JSONValue])
  /// Appends the values the array does not hold yet, each once.
  case addUnique([JSONValue])
  /// Takes out every element equal to one of the values.
  case remove([JSONValue])
  /// Adds pointers to objects of `className` to the relation (each once).
  case addRelation(className: String, objectIds: [String])
  /// Takes pointers out of the relation.
  case removeRelation(className: String, objectIds: [String])

  /// The values the engine compares and adds: for a relation, its pointers.
  public var values: [JSONValue] {
    switch self {
    case .add(let values), .addUnique(let values), .remove(let values): return values
    case .addRelation(let className, let ids), .removeRelation(let className, let ids):
      return ids.map { .pointer(className: className, objectId: $0) }
    }
  }

  /// The related class, for a relation.
  public var relationClass: String? {
    switch self {
    case .addRelation(let className, _), .removeRelation(let className, _): return className
    default: return nil
    }
  }

  /// Adds (unique or not) rather than removes.
  var adds: Bool {
    switch self {
    case .add, .addUnique, .addRelation: return true
    case .remove, .removeRelation: return false
    }
  }

  /// Adds only what is not there yet.
  var isUnique: Bool {
    switch self {
    case .addUnique, .addRelation: return true
    default: return false
    }
  }

  /// `values` without repeats, in their order (what `AddUnique` adds).
  var distinctValues: [JSONValue] {
    var seen: [JSONValue] = []
    for value in values where !seen.contains(value) { seen.append(value) }
    return seen
  }
}
