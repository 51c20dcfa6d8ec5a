#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The datastore as one caller sees it: every operation is checked against the caller's
/// principals, by the engine. Refusals change nothing. Input is validated here, before it reaches
/// an engine; the board's rules (`EngineRules`) are checked here for a clear error and enforced
/// again by the engine.
public final class DatastoreClient {
  public let store: Datastore
  /// The principals this client was made with (or last read): whom the engine acts for.
  var caller: Principals
  var engine: any DatastoreEngine { store.engine }
  /// The server's checks on the steps of the operation it runs for this client
  /// (`perform(_:checking:)`); nil otherwise.
  var stepChecks: StepChecks?

  init(store: Datastore, principals: Principals) {
    self.store = store
    self.caller = principals
  }

  /// Your user and roles as the server last said them, to decide by: a session an https board
  /// resumed from the profile's kept answer is confirmed first (`SessionWire`).
  public internal(set) var principals: Principals {
    get { (try? engine.confirmedSession(of: caller))?.principals ?? caller }
    set { caller = newValue }
  }

  /// Your user object as the session's answer last said it, when an https board's engine
  /// resumed or asked for one (confirmed first, as `principals`); nil on other engines.
  public var sessionUser: User? {
    (try? engine.confirmedSession(of: caller)).map { User(object: $0.user) }
  }

  /// Has the server confirm the session's answer the engine resumed with, if it has not yet
  /// (`principals` and `sessionUser` do it too, but cannot say that it failed).
  public func confirmSession() throws {
    _ = try engine.confirmedSession(of: caller)
  }

  /// The signed-in user's objectId; nil for a caller without a session.
  public var userId: String? { caller.userId }

  /// Runs `body` in one transaction: everything it writes lands together or not at all. The
  /// engine may run `body` again after a serialization failure. For tools that write in bulk
  /// (`forum-bench`'s seeds): an application says a write of several steps as a
  /// `WriteOperation` (`perform`), which an engine across the network sends as one request.
  @_spi(Tools)
  public func transaction<T>(_ body: () throws -> T) throws -> T {
    try engine.transaction(body)
  }

  // MARK: Objects

  /// Creates an object. No ACL means the backend's default, public read and write. The rules
  /// apply (`EngineRules`): managed fields are refused (`E400002`), an owner field naming
  /// anyone but the caller or writers other than the caller are `E403001`, a child of a parent
  /// the caller cannot read is `E404001`.
  @discardableResult
  public func create(_ className: String, fields: [String: JSONValue], acl: ACL? = nil) throws
    -> DataObject
  {
    try DatastoreClient.validate(className: className)
    try DatastoreClient.validate(fields: fields)
    var fields = fields
    let acl = acl ?? .publicReadWrite
    if !caller.isMaster {
      guard className != User.className else {
        throw DatastoreError(.noAccess, reason: StoreReason.usersAreMadeBySigningIn)
      }
      try checkCreate(className, &fields, acl)
    }
    return try engine.insert(className, fields: fields, acl: acl, as: caller)
  }

  private func checkCreate(_ className: String, _ fields: inout [String: JSONValue], _ acl: ACL)
    throws
  {
    let rules = store.rules
    let owner = rules.owner(of: className)
    for field in rules.managedFields(of: className) where fields[field] != nil {
      guard field == owner?.field else {
        throw DatastoreError.invalid(field, "set by the datastore, not by clients")
      }
    }
    if let owner {
      guard let userId else { throw DatastoreError(.authentication) }
      if let given = fields[owner.field], given.pointerId != userId {
        throw DatastoreError(.noAccess, reason: StoreReason.mustBeYou(field: owner.field))
      }
      guard acl.writers.contains(userId),
        acl.writers.isSubset(of: owner.additionalWriters.union([userId]))
      else { throw DatastoreError(.noAccess, reason: StoreReason.onlyYouMayWrite) }
      fields[owner.field] = .pointer(className: User.className, objectId: userId)
    }
    if let pair = rules.pairRule(of: className) {
      guard let userId else { throw DatastoreError(.authentication) }
      guard let partner = fields[pair.partnerField] else {
        throw DatastoreError.empty(pair.partnerField)
      }
      guard partner.pointerId.map(Validation.isObjectId) == true,
        partner.objectValue?["className"] == .string(User.className)
      else { throw DatastoreError.invalid(pair.partnerField) }
      guard partner.pointerId != userId else {
        throw DatastoreError.invalid(pair.partnerField, "a conversation needs someone else")
      }
    }
    if let child = rules.childRule(of: className) {
      guard let parent = fields[child.parentField] else {
        throw DatastoreError.empty(child.parentField)
      }
      guard parent.pointerId.map(Validation.isObjectId) == true,
        parent.objectValue?["className"] == .string(child.parentClass)
      else { throw DatastoreError.invalid(child.parentField) }
    }
  }

  /// One object. Missing or unreadable is `E404001`.
  public func get(_ className: String, objectId: String) throws -> DataObject {
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    return try engine.get(className, objectId: objectId, as: caller)
  }

  /// Objects matching `query` that the caller may read; the rest are left out silently.
  public func find(_ query: Query) throws -> [DataObject] {
    try DatastoreClient.validate(query: query)
    return try withIncludes(try engine.find(query, as: caller), of: query)
  }

  /// `find`'s objects written one after another, comma-separated, as `shape` writes them:
  /// straight from their stored text where the engine can, building none (a server's find).
  /// Their ids, in order.
  public func find(_ query: Query, writing shape: ObjectShape, to out: inout [UInt8]) throws
    -> [String]
  {
    guard query.include.isEmpty || engine.resolvesIncludes else {
      return shape.write(try find(query), to: &out)
    }
    try DatastoreClient.validate(query: query)
    return try engine.find(query, as: caller, writing: shape, to: &out)
  }

  /// `get`'s object written as `shape` writes it, straight from its stored text where the
  /// engine can.
  public func get(
    _ className: String, objectId: String, writing shape: ObjectShape, to out: inout [UInt8]
  ) throws {
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    try engine.get(className, objectId: objectId, as: caller, writing: shape, to: &out)
  }

  /// `objects` found by `query` with its `include` resolved, when the engine did not.
  func withIncludes(_ objects: [DataObject], of query: Query) throws -> [DataObject] {
    guard !query.include.isEmpty, !engine.resolvesIncludes else { return objects }
    return try resolveIncludes(
      query.include, in: objects, keys: query.includeKeys, budget: query.costBudget)
  }

  /// The objects of `className` with these ids that the caller may read, in any order (missing
  /// and unreadable ones are left out), with the pointers in `include` resolved.
  public func get(
    _ className: String, objectIds: [String], include: [String] = [],
    includeKeys: Set<String>? = nil
  ) throws -> [DataObject] {
    try DatastoreClient.validate(className: className)
    let ids = objectIds.filter(Validation.isObjectId)
    guard !ids.isEmpty else { return [] }
    guard ids.count <= Query.maximumLimit else {
      throw DatastoreError.invalid("objectIds", "at most \(Query.maximumLimit)")
    }
    var objects = try engine.fetch(objectIds: ids, as: caller).filter {
      $0.className == className
    }
    if !include.isEmpty {
      objects = try resolveIncludes(include, in: objects, keys: includeKeys, budget: nil)
    }
    return objects
  }

  /// `find`, with `count` of the same query when the page is full (as many as `query.limit`);
  /// nil when it is not (the engine may give it anyway). Over https one request (NCMB's
  /// `count=1` beside the page).
  public func findCounted(_ query: Query) throws -> (objects: [DataObject], count: Int?) {
    try DatastoreClient.validate(query: query)
    let (objects, count) = try engine.findCounted(query, as: caller)
    return (try withIncludes(objects, of: query), count)
  }

  /// How many objects match `query` among those the caller may read.
  public func count(_ query: Query) throws -> Int {
    try DatastoreClient.validate(query: query)
    return try engine.count(query, as: caller)
  }

  /// Objects holding every term of `search` in their text fields, among those the caller may
  /// read, best first, with the pointers named by `include` resolved (as `find` does). A term is
  /// text, whatever characters it holds; an empty, too long or NUL-holding one is `E400002`.
  public func search(_ search: TextSearch, include: [String] = []) throws -> [DataObject] {
    guard !search.terms.isEmpty else { throw DatastoreError.empty("query") }
    guard search.terms.count <= TextSearch.maximumTerms else {
      throw DatastoreError.invalid("query", "more than \(TextSearch.maximumTerms) words")
    }
    for term in search.terms {
      guard !term.isEmpty else { throw DatastoreError.empty("query") }
      guard term.count <= TextSearch.maximumTermLength else {
        throw DatastoreError.invalid(
          "query", "a word longer than \(TextSearch.maximumTermLength) characters")
      }
      guard !term.utf8.contains(0) else {
        throw DatastoreError.invalid("query", "contains a NUL character")
      }
    }
    for target in search.targets {
      try DatastoreClient.validate(
        query: Query(className: target.className, equalTo: target.equalTo, include: include))
    }
    guard (1...Query.maximumLimit).contains(search.limit), search.skip >= 0 else {
      throw DatastoreError.invalid("limit", "between 1 and \(Query.maximumLimit)")
    }
    let objects = try engine.search(search, as: caller)
    return include.isEmpty ? objects : try resolveIncludes(include, in: objects)
  }

  /// The objects with these ids the caller may read, of any class (`DatastoreEngine.fetch`):
  /// a server answering a remote engine's `fetch`.
  @_spi(Server)
  public func fetch(objectIds: [String], keys: Set<String>?, budget: Int?) throws -> [DataObject] {
    let ids = objectIds.filter(Validation.isObjectId)
    guard ids.count <= Query.maximumLimit else {
      throw DatastoreError.invalid("objectIds", "at most \(Query.maximumLimit)")
    }
    guard !ids.isEmpty else { return [] }
    return try engine.fetch(objectIds: ids, keys: keys, budget: budget, as: caller)
  }

  /// Sets `fields` (a `.null` value removes the field) and adds `increments` to integer fields,
  /// atomically, in one conditional write. Needs write access: `E403001` when the caller can
  /// read the object, else `E404001`. Managed and fixed fields of the rules are `E400002`.
  @discardableResult
  public func update(
    _ className: String, objectId: String, set fields: [String: JSONValue] = [:],
    increment increments: [String: Int64] = [:], arrays: [String: ArrayChange] = [:],
    acl: ACL? = nil
  ) throws -> DataObject {
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    try DatastoreClient.validate(fields: fields)
    try DatastoreClient.validate(fields: increments.mapValues { JSONValue.int($0) })
    for (field, change) in arrays {
      guard fields[field] == nil, increments[field] == nil else {
        throw DatastoreError.invalid(field, "changed twice in one update")
      }
      guard !change.values.isEmpty else { throw DatastoreError.empty(field) }
      try DatastoreClient.validate(fields: [field: .array(change.values)])
      if let related = change.relationClass {
        try DatastoreClient.validate(className: related)
        guard change.values.allSatisfy({ $0.pointerId.map(Validation.isObjectId) == true }) else {
          throw DatastoreError.invalid(field, "a relation holds objectIds")
        }
      }
    }
    if !caller.isMaster {
      let rules = store.rules
      let untouchable = rules.managedFields(of: className).union(rules.fixedFields(of: className))
      for field in Set(fields.keys).union(increments.keys).union(arrays.keys)
      where untouchable.contains(field) {
        throw DatastoreError.invalid(field, "set by the datastore, not by clients")
      }
    }
    return try engine.update(
      className, objectId: objectId, set: fields, increment: increments, arrays: arrays, acl: acl,
      as: caller)
  }

  /// Bytes of JSON the objects this client's user created hold (`DatastoreEngine.storedBytes`);
  /// nil when the engine does not count them or there is no user.
  public func storedBytes() throws -> Int? {
    try engine.storedBytes(as: caller)
  }

  /// Deletes an object, with what the rules cascade. Needs write access.
  public func delete(_ className: String, objectId: String) throws {
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    try engine.delete(className, objectId: objectId, as: caller)
  }

  /// Resolves the pointers `keys` of `objects`, reading only `fields` of their targets (nil:
  /// all), within `budget` (`Query.costBudget`).
  private func resolveIncludes(
    _ keys: [String], in objects: [DataObject], keys fields: Set<String>? = nil,
    budget: Int? = nil
  ) throws -> [DataObject] {
    // `a.b` includes `a`, then `b` of what `a` points at (NCMB's `include=a.b`).
    var heads: [String] = []
    var tails: [String: [String]] = [:]
    for key in keys {
      let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
      if !heads.contains(parts[0]) { heads.append(parts[0]) }
      if parts.count == 2 { tails[parts[0], default: []].append(parts[1]) }
    }
    let ids = Set(objects.flatMap { object in heads.compactMap { object[$0]?.pointerId } })
    let deeperHeads = tails.values.flatMap { $0 }.map { String($0.prefix { $0 != "." }) }
    let wanted = fields.map { $0.union(deeperHeads) }
    var targets = try engine.fetch(
      objectIds: Array(ids), keys: wanted, budget: budget, as: caller)
    let deeper = Array(Set(tails.values.flatMap { $0 })).sorted()
    if !deeper.isEmpty {
      targets = try resolveIncludes(deeper, in: targets, keys: fields, budget: budget)
    }
    let byId = Dictionary(
      targets.map { ($0.objectId, $0) }, uniquingKeysWith: { first, _ in first })
    return objects.map { object in
      var object = object
      for key in heads {
        if let id = object[key]?.pointerId, let target = byId[id] { object.included[key] = target }
      }
      return object
    }
  }

  /// Levels one `include` may reach (`a.b.c`).
  public static let maximumIncludeDepth = 3

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
        .fileTooLarge,
        reason: StoreReason.fileTooLarge(bytes: bytes.count, limit: store.fileSizeLimit))
    }
    guard !mimeType.isEmpty, mimeType.utf8.count <= 100, mimeType.contains("/") else {
      throw DatastoreError.invalid("mimeType")
    }
    return try engine.insertFile(
      name: name, bytes: bytes, mimeType: mimeType, acl: acl ?? .publicReadWrite, as: caller)
  }

  /// A file's metadata. Missing or unreadable is `E404001`.
  public func fileInfo(name: String) throws -> FileInfo {
    guard Validation.isFileName(name) else { throw DatastoreError.invalid("fileName") }
    return try engine.fileInfo(name: name, as: caller)
  }

  /// A file's bytes, exactly as stored.
  public func getFile(name: String) throws -> [UInt8] {
    guard Validation.isFileName(name) else { throw DatastoreError.invalid("fileName") }
    return try engine.fileBytes(name: name, as: caller)
  }

  /// The fields a file search may name: a file's metadata, as NCMB's `GET /files` lists it.
  public static let fileFields: Set<String> = [
    "fileName", "mimeType", "fileSize", "createDate", "updateDate",
  ]

  /// Files the caller may read whose metadata matches `query.conditions` (the operators of an
  /// object query, checked by the same rules), in `query.order`, paged by `limit` and `skip`.
  /// Files the caller may not read are never found, counted or told apart from missing ones.
  /// A condition or order on anything but `fileFields`, an `include` or an equality by field
  /// (`equalTo`, `greaterThan`, `lessThan`) is `E400002`.
  public func findFiles(_ query: Query) throws -> [FileInfo] {
    try DatastoreClient.validate(fileQuery: query)
    return try engine.findFiles(query, as: caller)
  }

  /// How many files `findFiles` would find without paging.
  public func countFiles(_ query: Query) throws -> Int {
    try DatastoreClient.validate(fileQuery: query)
    return try engine.countFiles(query, as: caller)
  }

  static func validate(fileQuery query: Query) throws {
    guard query.equalTo.isEmpty, query.greaterThan.isEmpty, query.lessThan.isEmpty,
      !query.unreadOnly
    else { throw DatastoreError.invalid("where") }
    guard query.include.isEmpty else {
      throw DatastoreError.invalid("include", "files have no pointers")
    }
    var checked = query
    checked.className = "file"
    try validate(query: checked)
    for key in query.order {
      let field = key.hasPrefix("-") ? String(key.dropFirst()) : key
      guard fileFields.contains(field) else {
        throw DatastoreError.invalid("order", "a file has no field \(field)")
      }
    }
    func walk(_ condition: QueryCondition) throws {
      switch condition {
      case .equal(let field, _), .notEqual(let field, _), .compare(let field, _, _),
        .isIn(let field, _), .notIn(let field, _), .exists(let field, _),
        .arrayContainsAny(let field, _), .arrayContainsAll(let field, _),
        .arrayContainsNone(let field, _), .matches(let field, _, _), .withinBox(let field, _, _),
        .near(let field, _, _):
        guard fileFields.contains(field) else {
          throw DatastoreError.invalid("where", "a file has no field \(field)")
        }
      case .and(let parts), .or(let parts):
        for part in parts { try walk(part) }
      }
    }
    for condition in query.conditions { try walk(condition) }
  }

  /// Deletes a file. Needs write access.
  public func deleteFile(name: String) throws {
    guard Validation.isFileName(name) else { throw DatastoreError.invalid("fileName") }
    try engine.deleteFile(name: name, as: caller)
  }

  /// Replaces a file's ACL. Needs write access; the bytes, name and type never change.
  @discardableResult
  public func setFileACL(name: String, acl: ACL) throws -> FileInfo {
    guard Validation.isFileName(name) else { throw DatastoreError.invalid("fileName") }
    return try engine.updateFile(name: name, acl: acl, as: caller)
  }

  // MARK: Change feed

  /// The newest change's sequence: read `changes(since:)` from here to see what happens next.
  public func latestChange() throws -> Int64 {
    try engine.latestChange()
  }

  /// Changes after `since` that the caller may read (see `Change`), at most `limit`, oldest first.
  public func changes(since: Int64, limit: Int = 500) throws -> ChangeBatch {
    guard since >= 0 else { throw DatastoreError.invalid("since") }
    guard (1...Query.maximumLimit).contains(limit) else {
      throw DatastoreError.invalid("limit", "between 1 and \(Query.maximumLimit)")
    }
    return try engine.changes(since: since, limit: limit, as: caller)
  }

  /// A descriptor to `poll` with stdin: readable when another process committed (PostgreSQL),
  /// or nil when `hasPendingWakeup` is to be asked every `wakePollInterval` seconds (SQLite).
  public func wakeFileDescriptor() throws -> Int32? {
    try engine.wakeFileDescriptor()
  }

  public var wakePollInterval: Double { engine.wakePollInterval }

  /// True when someone may have committed since the feed was last read: time to read it again.
  public func hasPendingWakeup() throws -> Bool {
    try engine.hasPendingWakeup()
  }

  // MARK: Validation

  static let reservedFields: Set<String> = ["objectId", "createDate", "updateDate", "acl"]
  static let maximumTextBytes = 1_000_000
  /// A whole object as JSON text, and how deep it may nest: held by each engine's server side
  /// (SQLite triggers, PostgreSQL's check), so an app or a member with psql is bound too.
  static let maximumObjectBytes = 2_000_000
  static let maximumObjectDepth = 100
  /// Values in one write (each field, element and member at any depth): what a reader builds
  /// for a value is some 60 bytes a node, so 1 MB of `[[0],[0],…]` would cost every reader
  /// 23 MB (issue 28).
  public static let maximumObjectNodes = 20_000

  static func validate(className: String) throws {
    guard !className.isEmpty else { throw DatastoreError.empty("className") }
    guard Validation.isName(className) else { throw DatastoreError.invalid("className") }
  }

  static func validate(fields: [String: JSONValue]) throws {
    var nodes = 0
    for (key, value) in fields {
      guard Validation.isName(key), !reservedFields.contains(key) else {
        throw DatastoreError.invalid(key.isEmpty ? "field name" : key)
      }
      try validate(value: value, field: key, nodes: &nodes)
    }
  }

  /// `level` is the value's depth in the object (a field is at level 1), bounded as the engines
  /// bound it; the engines' own checks hold for writers that come past this client.
  private static func validate(
    value: JSONValue, field: String, level: Int = 1, nodes: inout Int
  ) throws {
    guard level <= maximumObjectDepth else {
      throw DatastoreError.invalid(field, "nested deeper than \(maximumObjectDepth) levels")
    }
    nodes += 1
    guard nodes <= maximumObjectNodes else {
      throw DatastoreError.invalid(field, "more than \(maximumObjectNodes) values in one object")
    }
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
      for value in values {
        try validate(value: value, field: field, level: level + 1, nodes: &nodes)
      }
    case .object(let nested):
      for (key, value) in nested {
        guard !key.isEmpty, key.utf8.count <= 64 else { throw DatastoreError.invalid(field) }
        try validate(value: value, field: field, level: level + 1, nodes: &nodes)
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
    guard query.order.count <= Query.maximumOrderFields else {
      throw DatastoreError.invalid("order", "more than \(Query.maximumOrderFields) fields")
    }
    for key in query.order {
      let field = key.hasPrefix("-") ? String(key.dropFirst()) : key
      guard isFieldPath(field) else { throw DatastoreError.invalid("order") }
    }
    let conditions = Array(query.equalTo.keys) + query.greaterThan.keys + query.lessThan.keys
    for field in conditions where !isFieldPath(field) {
      throw DatastoreError.invalid("where")
    }
    for field in query.include {
      let parts = field.split(separator: ".", omittingEmptySubsequences: false)
      guard parts.count <= maximumIncludeDepth, parts.allSatisfy({ Validation.isName($0) }) else {
        throw DatastoreError.invalid("include")
      }
    }
    for field in (query.keys ?? []).union(query.includeKeys ?? []) where !Validation.isName(field) {
      throw DatastoreError.invalid("keys")
    }
    try validate(conditions: query.conditions)
    if let nearest = query.nearest {
      guard isFieldPath(nearest.field), nearest.point.isValid else {
        throw DatastoreError.invalid("where")
      }
    }
  }

  /// A field name or a dotted path into object fields (`authData.anonymous.id`).
  static func isFieldPath(_ path: String) -> Bool {
    let parts = path.split(separator: ".", omittingEmptySubsequences: false)
    return !parts.isEmpty && parts.allSatisfy { Validation.isName($0) }
  }
}
