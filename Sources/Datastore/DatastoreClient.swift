#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The datastore as one caller sees it: every operation is checked against the caller's
/// principals. Refusals change nothing.
public final class DatastoreClient {
  public let store: Datastore
  public let principals: Principals
  private var storage: any Storage { store.storage }

  init(store: Datastore, principals: Principals) {
    self.store = store
    self.principals = principals
  }

  /// The signed-in user's objectId; nil for a caller without a session or the master key.
  public var userId: String? { principals.userId }

  /// Runs `body` in one transaction: everything it writes lands together or not at all.
  public func transaction<T>(_ body: () throws -> T) throws -> T {
    try store.guardStorage { try storage.transaction(body) }
  }

  // MARK: Objects

  /// Creates an object. No ACL means the backend's default, public read and write.
  @discardableResult
  public func create(_ className: String, fields: [String: JSONValue], acl: ACL? = nil) throws
    -> DataObject
  {
    try DatastoreClient.validate(className: className)
    try DatastoreClient.validate(fields: fields)
    let now = BackendDate.now()
    let object = DataObject(
      className: className, objectId: Validation.randomId(), createDate: now, updateDate: now,
      acl: acl ?? .publicReadWrite, fields: fields)
    try store.guardStorage { try storage.insert(object) }
    return object
  }

  /// One object. Missing is `E404001`; present but unreadable is `E403001`.
  public func get(_ className: String, objectId: String) throws -> DataObject {
    let object = try existing(className, objectId)
    guard object.acl.allowsRead(principals) else { throw DatastoreError.noAccess }
    return object
  }

  /// Objects matching `query` that the caller may read; the rest are left out silently.
  public func find(_ query: Query) throws -> [DataObject] {
    try DatastoreClient.validate(query: query)
    return try store.guardStorage {
      var objects = try storage.find(query, readableBy: principals)
      if !query.include.isEmpty { objects = try resolveIncludes(query.include, in: objects) }
      return objects
    }
  }

  /// How many objects match `query` among those the caller may read.
  public func count(_ query: Query) throws -> Int {
    try DatastoreClient.validate(query: query)
    return try store.guardStorage { try storage.count(query, readableBy: principals) }
  }

  /// Sets `fields` (a `.null` value removes the field) and adds `increments` to numeric fields,
  /// atomically. Needs write access.
  @discardableResult
  public func update(
    _ className: String, objectId: String, set fields: [String: JSONValue] = [:],
    increment increments: [String: Int64] = [:], acl: ACL? = nil
  ) throws -> DataObject {
    try DatastoreClient.validate(fields: fields)
    try DatastoreClient.validate(fields: increments.mapValues { JSONValue.int($0) })
    return try transaction {
      let object = try existing(className, objectId)
      guard object.acl.allowsWrite(principals) else { throw DatastoreError.noAccess }
      var merged = object.fields
      for (key, value) in fields { merged[key] = value == .null ? nil : value }
      for (key, delta) in increments {
        let current = merged[key] ?? .int(0)
        guard let number = current.intValue else {
          throw DatastoreError.invalid(key, "cannot add to a value that is not a number")
        }
        merged[key] = .int(number + delta)
      }
      let updated = DataObject(
        className: className, objectId: objectId, createDate: object.createDate,
        updateDate: max(BackendDate.now(), object.updateDate), acl: acl ?? object.acl,
        fields: merged)
      try storage.replace(updated)
      return updated
    }
  }

  /// Deletes an object. Needs write access.
  public func delete(_ className: String, objectId: String) throws {
    try transaction {
      let object = try existing(className, objectId)
      guard object.acl.allowsWrite(principals) else { throw DatastoreError.noAccess }
      try storage.delete(className: className, objectId: objectId)
    }
  }

  /// Deletes every object matching `query`'s conditions. Master key only: it is for cascades
  /// (a thread's comments go with it), where the ACL check was made on the parent.
  @discardableResult
  public func deleteAll(matching query: Query) throws -> Int {
    guard principals.isMaster else { throw DatastoreError.noAccess }
    try DatastoreClient.validate(query: query)
    return try transaction { try storage.deleteAll(query) }
  }

  /// The next number of a named sequence (1, 2, 3, …), never handed out twice.
  public func nextNumber(of sequence: String) throws -> Int64 {
    guard Validation.isName(sequence) else {
      throw DatastoreError.invalid("sequence")
    }
    return try transaction { try storage.nextValue(counter: sequence) }
  }

  private func existing(_ className: String, _ objectId: String) throws -> DataObject {
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    guard
      let object = try store.guardStorage({
        try storage.fetch(className: className, objectId: objectId)
      })
    else { throw DatastoreError.notFound }
    return object
  }

  private func resolveIncludes(_ keys: [String], in objects: [DataObject]) throws -> [DataObject] {
    let ids = Set(objects.flatMap { object in keys.compactMap { object[$0]?.pointerId } })
    let targets = try storage.fetch(objectIds: Array(ids), readableBy: principals)
    let byId = Dictionary(
      targets.map { ($0.objectId, $0) }, uniquingKeysWith: { first, _ in first })
    return objects.map { object in
      var object = object
      for key in keys {
        if let id = object[key]?.pointerId, let target = byId[id] { object.included[key] = target }
      }
      return object
    }
  }

  // MARK: Files

  /// Stores a file. Over the store's limit is `E413001`; a name already taken is `E400002`.
  @discardableResult
  public func putFile(name: String, bytes: [UInt8], mimeType: String, acl: ACL? = nil) throws
    -> FileInfo
  {
    guard Validation.isFileName(name) else { throw DatastoreError.invalid("fileName") }
    guard !bytes.isEmpty else { throw DatastoreError.empty("file") }
    guard bytes.count <= store.fileSizeLimit else {
      throw DatastoreError(
        .fileTooLarge, detail: "\(bytes.count) bytes, the limit is \(store.fileSizeLimit)")
    }
    guard !mimeType.isEmpty, mimeType.utf8.count <= 100, mimeType.contains("/") else {
      throw DatastoreError.invalid("mimeType")
    }
    let now = BackendDate.now()
    let info = FileInfo(
      fileName: name, mimeType: mimeType, fileSize: bytes.count, createDate: now,
      updateDate: now, acl: acl ?? .publicReadWrite)
    try transaction {
      guard try storage.fileInfo(name: name) == nil else {
        throw DatastoreError.invalid("fileName", "a file named \(name) already exists")
      }
      try storage.insertFile(info, bytes: bytes)
    }
    return info
  }

  /// A file's metadata. Missing is `E404001`; unreadable is `E403001`.
  public func fileInfo(name: String) throws -> FileInfo {
    let info = try existingFile(name)
    guard info.acl.allowsRead(principals) else { throw DatastoreError.noAccess }
    return info
  }

  /// A file's bytes, exactly as stored.
  public func getFile(name: String) throws -> [UInt8] {
    _ = try fileInfo(name: name)
    guard let bytes = try store.guardStorage({ try storage.fileBytes(name: name) }) else {
      throw DatastoreError.notFound
    }
    return bytes
  }

  /// Deletes a file. Needs write access.
  public func deleteFile(name: String) throws {
    try transaction {
      let info = try existingFile(name)
      guard info.acl.allowsWrite(principals) else { throw DatastoreError.noAccess }
      try storage.deleteFile(name: name)
    }
  }

  private func existingFile(_ name: String) throws -> FileInfo {
    guard Validation.isFileName(name) else { throw DatastoreError.invalid("fileName") }
    guard let info = try store.guardStorage({ try storage.fileInfo(name: name) }) else {
      throw DatastoreError.notFound
    }
    return info
  }

  // MARK: Validation

  static let reservedFields: Set<String> = ["objectId", "createDate", "updateDate", "acl"]
  static let maximumTextBytes = 1_000_000

  static func validate(className: String) throws {
    guard !className.isEmpty else { throw DatastoreError.empty("className") }
    guard Validation.isName(className) else { throw DatastoreError.invalid("className") }
  }

  static func validate(fields: [String: JSONValue]) throws {
    for (key, value) in fields {
      guard Validation.isName(key), !reservedFields.contains(key) else {
        throw DatastoreError.invalid(key.isEmpty ? "field name" : key)
      }
      try validate(value: value, field: key)
    }
  }

  private static func validate(value: JSONValue, field: String) throws {
    switch value {
    case .string(let text):
      // SQLite cuts bound text at a NUL, so a stored NUL could never be matched or shown whole.
      guard !text.utf8.contains(0) else {
        throw DatastoreError.invalid(field, "contains a NUL character")
      }
      guard text.utf8.count <= maximumTextBytes else {
        throw DatastoreError.invalid(field, "longer than \(maximumTextBytes) bytes")
      }
    case .double(let number):
      guard number.isFinite else { throw DatastoreError.invalid(field, "not a finite number") }
    case .array(let values):
      for value in values { try validate(value: value, field: field) }
    case .object(let nested):
      for (key, value) in nested {
        guard !key.isEmpty, key.utf8.count <= 64 else { throw DatastoreError.invalid(field) }
        try validate(value: value, field: field)
      }
    case .null, .bool, .int: break
    }
  }

  static func validate(query: Query) throws {
    try validate(className: query.className)
    guard (1...Query.maximumLimit).contains(query.limit) else {
      throw DatastoreError.invalid("limit", "between 1 and \(Query.maximumLimit)")
    }
    guard query.skip >= 0 else { throw DatastoreError.invalid("skip") }
    for key in query.order {
      let field = key.hasPrefix("-") ? String(key.dropFirst()) : key
      guard isFieldPath(field) else { throw DatastoreError.invalid("order") }
    }
    let conditions = Array(query.equalTo.keys) + query.greaterThan.keys + query.lessThan.keys
    for field in conditions where !isFieldPath(field) {
      throw DatastoreError.invalid("where")
    }
    for field in query.include where !Validation.isName(field) {
      throw DatastoreError.invalid("include")
    }
  }

  /// A field name or a dotted path into object fields (`authData.anonymous.id`).
  private static func isFieldPath(_ path: String) -> Bool {
    let parts = path.split(separator: ".", omittingEmptySubsequences: false)
    return !parts.isEmpty && parts.allSatisfy { Validation.isName($0) }
  }
}
