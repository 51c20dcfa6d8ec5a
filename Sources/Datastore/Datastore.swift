#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The local mobile backend: objects with ACLs, anonymous users with sessions, a file store.
/// Open one per database; hand out a `DatastoreClient` per caller.
public final class Datastore {
  public let path: String
  /// Largest file `putFile` accepts, in bytes (`E413001` above it).
  public let fileSizeLimit: Int
  /// How long a session stays valid after login.
  public let sessionLifetime: TimeInterval
  let storage: any Storage

  public static let defaultFileSizeLimit = 5 * 1024 * 1024

  /// Opens the database at `path`, creating it and its schema when missing, and makes sure the
  /// given indexes exist.
  public init(
    path: String, indexes: [IndexSpec] = [], fileSizeLimit: Int = Datastore.defaultFileSizeLimit,
    sessionLifetime: TimeInterval = 30 * 24 * 3600
  ) throws {
    guard !path.isEmpty else { throw DatastoreError.empty("database path") }
    self.path = path
    self.fileSizeLimit = fileSizeLimit
    self.sessionLifetime = sessionLifetime
    let storage = try SQLiteStorage(path: path)
    let userIndex = IndexSpec(className: User.className, fields: [User.anonymousIdField])
    do {
      try storage.ensureIndexes([userIndex] + indexes)
    } catch let error as SQLiteError {
      throw SQLiteStorage.describe(error, path: path)
    }
    self.storage = storage
  }

  /// A client acting with the session `token`. An unknown or expired token is `E401001`;
  /// no token gives a caller without a session (the public principal only).
  public func client(sessionToken token: String?) throws -> DatastoreClient {
    guard let token else { return DatastoreClient(store: self, principals: .anonymous) }
    let userId = try guardStorage {
      try storage.sessionUser(token: token, now: BackendDate.now())
    }
    guard let userId else { throw DatastoreError(.authentication) }
    let roles = try guardStorage { try storage.roles(of: userId) }
    return DatastoreClient(store: self, principals: Principals(userId: userId, roles: roles))
  }

  /// The backend's master key: passes every ACL. For the board's own bookkeeping (counters on
  /// a thread others commented on, cascading deletes) and for administration, never for a
  /// request made on a person's behalf.
  public var master: DatastoreClient { DatastoreClient(store: self, principals: .master) }

  /// Makes `userId` a member of `role`. Administration: callers decide who may do it.
  public func addMember(_ userId: String, toRole role: String) throws {
    guard Validation.isRoleName(role) else { throw DatastoreError.invalid("role") }
    guard Validation.isObjectId(userId) else { throw DatastoreError.invalid("userId") }
    try guardStorage { try storage.addRoleMember(role: role, userId: userId) }
  }

  /// Runs a storage call, turning SQLite failures into `E500001` with the database path.
  func guardStorage<T>(_ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as SQLiteError {
      throw SQLiteStorage.describe(error, path: path)
    }
  }
}
