/// Where the datastore keeps its rows. `SQLiteStorage` is the local engine; a server engine can
/// implement the same protocol. The storage enforces nothing: `DatastoreClient` checks ACLs and
/// validates input before calling it, except for `find`/`count`, which filter by `readableBy`
/// so that unreadable rows never leave the engine.
protocol Storage: AnyObject {
  var location: String { get }

  /// Runs `body` atomically; a throw undoes everything it wrote.
  func transaction<T>(_ body: () throws -> T) throws -> T

  func insert(_ object: DataObject) throws
  func fetch(className: String, objectId: String) throws -> DataObject?
  func find(_ query: Query, readableBy principals: Principals) throws -> [DataObject]
  func count(_ query: Query, readableBy principals: Principals) throws -> Int
  func fetch(objectIds: [String], readableBy principals: Principals) throws -> [DataObject]
  func replace(_ object: DataObject) throws
  func delete(className: String, objectId: String) throws
  /// Deletes every object matching the query's conditions (order and paging ignored).
  func deleteAll(_ query: Query) throws -> Int
  func ensureIndexes(_ specs: [IndexSpec]) throws

  func insertFile(_ info: FileInfo, bytes: [UInt8]) throws
  func fileInfo(name: String) throws -> FileInfo?
  func fileBytes(name: String) throws -> [UInt8]?
  func deleteFile(name: String) throws

  func insertSession(token: String, userId: String, expiresAt: Int64) throws
  /// The user a session belongs to, if it exists and has not expired at `now`.
  func sessionUser(token: String, now: Int64) throws -> String?
  func deleteSessions(userId: String) throws

  func addRoleMember(role: String, userId: String) throws
  func roles(of userId: String) throws -> [String]

  /// The next value of a named counter, starting at 1; never hands out a value twice.
  func nextValue(counter: String) throws -> Int64
}
