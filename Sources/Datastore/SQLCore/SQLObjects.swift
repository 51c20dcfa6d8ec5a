/// An object's row as both SQL engines select it (each engine's `objectColumns`, aliased to
/// these names), its cells copied out of the answer so that a whole answer is weighed before
/// any of it is built (`ObjectReading`).
struct StoredObject {
  /// The names each engine's object columns are selected as, in their order.
  static let names = [
    "class_name", "object_id", "create_date", "update_date", "readers", "writers", "data",
  ]

  let className, objectId: String
  let createDate, updateDate: Int64
  let readers, writers: String?
  /// The fields' JSON text.
  let data: String
  /// A parent's counters' JSON text where an engine keeps them apart from `data` (SQLite's
  /// `counts`, selected as `countsName`), merged over `data` as it is read: nil where there is
  /// none.
  let counts: String?

  /// The name an engine selects a parent's counters column as, after `names`.
  static let countsName = "counts"

  /// Where `names` stand in an answer: looked up by name once an answer, not once a cell (a
  /// listing reads a few hundred rows; hashing each cell's name was a tenth of a local `list`).
  struct Columns {
    let className, objectId, createDate, updateDate, readers, writers, data: Int
    let counts: Int?

    init(_ row: any SQLRow) {
      func at(_ name: String) -> Int {
        guard let position = row.position(of: name) else {
          preconditionFailure("no column \(name) in the answer")
        }
        return position
      }
      (className, objectId, createDate, updateDate) =
        (at("class_name"), at("object_id"), at("create_date"), at("update_date"))
      (readers, writers, data) = (at("readers"), at("writers"), at("data"))
      counts = row.position(of: StoredObject.countsName)
    }
  }

  init(
    className: String, objectId: String, createDate: Int64, updateDate: Int64,
    readers: String?, writers: String?, data: String, counts: String?
  ) {
    (self.className, self.objectId, self.createDate, self.updateDate) =
      (className, objectId, createDate, updateDate)
    (self.readers, self.writers, self.data, self.counts) = (readers, writers, data, counts)
  }

  init(row: any SQLRow, at columns: Columns) {
    className = row.text(at: columns.className) ?? ""
    objectId = row.text(at: columns.objectId) ?? ""
    createDate = row.int(at: columns.createDate)
    updateDate = row.int(at: columns.updateDate)
    readers = row.text(at: columns.readers)
    writers = row.text(at: columns.writers)
    data = row.text(at: columns.data) ?? "{}"
    counts = columns.counts.flatMap { row.text(at: $0) }
  }

  init(row: any SQLRow) { self.init(row: row, at: Columns(row)) }

  /// `init(row:at:)` weighed by `reading`: past its budget the answer fails before any is built.
  init(row: any SQLRow, at columns: Columns, weighedBy reading: ObjectReading?) throws {
    self.init(row: row, at: columns)
    try reading?.weigh(data)
    if let counts { try reading?.weigh(counts) }
  }

  /// The rows of an answer as objects: `row` reads each with the answer's `Columns`, found at
  /// its first row.
  static func reader(weighedBy reading: ObjectReading?) -> (any SQLRow) throws -> StoredObject {
    var columns: Columns?
    return { row in
      let at = columns ?? Columns(row)
      columns = at
      return try StoredObject(row: row, at: at, weighedBy: reading)
    }
  }
}

extension SQLCoreEngine {
  /// The engine's object columns (`o.` with `stored` giving each name's stored column or
  /// expression) aliased to `StoredObject`'s names.
  /// An eighth (a parent's counters, where the engine keeps them apart) is `countsName`.
  static func aliasedObjectColumns(_ stored: [String]) -> SQL {
    let names = StoredObject.names + [StoredObject.countsName]
    let columns = zip(stored, names).map { "\($0) AS \($1)" }
    return SQL(verbatim: columns.joined(separator: ", "))
  }

  /// A row as an object. A row written by another program may hold bytes that are not UTF-8
  /// (shown as U+FFFD), data that is not a JSON object, or nest deeper than the reader goes
  /// (a row from before a shape limit): that object comes back damaged, with the fields that
  /// could be read, so that one bad row never makes a listing of other rows fail.
  func object(_ row: StoredObject, reading: ObjectReading? = nil) -> DataObject {
    row.object(acl: storedACL(readers: row.readers, writers: row.writers), reading: reading)
  }

  /// The objects `statement` selects (with the engine's object columns), weighed first.
  func objects(_ statement: SQL, reading: ObjectReading? = nil) throws -> [DataObject] {
    try rows(statement, StoredObject.reader(weighedBy: reading)).map {
      object($0, reading: reading)
    }
  }

  /// `rows` written one after another, comma-separated, as `shape` writes their objects:
  /// straight from their stored text where it can be (`ObjectShape.write(stored:)`), else
  /// built first. Their ids, in order.
  func write(
    _ rows: [StoredObject], reading: ObjectReading?, as shape: ObjectShape,
    to out: inout [UInt8]
  ) -> [String] {
    var declared: (className: String, shape: ObjectShape.ClassShape?)?
    for (index, row) in rows.enumerated() {
      if index > 0 { out.append(UInt8(ascii: ",")) }
      let (acl, json) = writtenACL(readers: row.readers, writers: row.writers)
      if declared?.className != row.className {
        declared = (row.className, shape.classes[row.className])
      }
      if reading?.keys != nil
        || !shape.write(stored: row, declared: declared?.shape, acl: json, to: &out)
      {
        shape.write(row.object(acl: acl, reading: reading), to: &out)
      }
    }
    return rows.map(\.objectId)
  }
}

extension StoredObject {
  /// The row as an object with its ACL (`SQLCoreEngine.storedACL`), its fields read as `reading`
  /// asks (all of them without).
  func object(acl: ACL, reading: ObjectReading?) -> DataObject {
    var (fields, damaged) = reading?.build(data) ?? JSONValue.storedFields(data)
    if let counts, StoredObject.merge(counts, into: &fields, keys: reading?.keys) {
      damaged = true
    }
    var object = DataObject(
      className: className, objectId: objectId, createDate: createDate, updateDate: updateDate,
      acl: acl, fields: fields)
    object.isDamaged = damaged
    return object
  }
}

extension StoredObject {
  /// `counts` (`StoredObject.counts`) merged over an object's fields as a JSON merge patch
  /// (RFC 7396, what SQLite's `json_patch` does): a key set to null goes, an object merges into
  /// an object, anything else replaces. Counters written past the engine: what could be read
  /// of an object (nested past the reader, cut short) is merged and the object is damaged
  /// (true); anything else is not read. A damaged `data` keeps the counters over what could be
  /// read of it. Only `keys`, when the answer asks for some fields.
  @discardableResult
  static func merge(_ counts: String, into fields: inout [String: JSONValue], keys: Set<String>?)
    -> Bool
  {
    var (patch, damaged) = ((try? JSONValue.parse(counts))?.objectValue, false)
    if patch == nil {
      let salvaged = JSONValue.storedFields(counts).fields
      guard !salvaged.isEmpty else { return false }
      (patch, damaged) = (salvaged, true)
    }
    for (key, value) in patch ?? [:] where keys?.contains(key) ?? true {
      fields[key] = merged(fields[key], value)
    }
    return damaged
  }

  private static func merged(_ target: JSONValue?, _ patch: JSONValue) -> JSONValue? {
    guard case .object(let changes) = patch else { return patch == .null ? nil : patch }
    var object = target?.objectValue ?? [:]
    for (key, value) in changes { object[key] = merged(object[key], value) }
    return .object(object)
  }
}

/// Parsed ACL columns by their stored text, with their JSON: a board has few distinct ACLs (one
/// per author), so a listing parses and writes each once instead of once a row.
struct ACLCache {
  /// The two columns' texts, apart (joined, `a|b` + `c` and `a` + `b|c` met).
  private struct Columns: Hashable {
    let readers, writers: String?
  }
  private var parsed: [Columns: (acl: ACL, json: [UInt8])] = [:]

  mutating func acl(
    readers: String?, writers: String?, _ parse: (String?) -> Set<String>
  ) -> (acl: ACL, json: [UInt8]) {
    let key = Columns(readers: readers, writers: writers)
    if let known = parsed[key] { return known }
    if parsed.count >= 4096 { parsed.removeAll(keepingCapacity: true) }
    let acl = ACL(readers: parse(readers), writers: parse(writers))
    var json: [UInt8] = []
    ObjectShape.write(acl, to: &json)
    parsed[key] = (acl, json)
    return (acl, json)
  }
}
