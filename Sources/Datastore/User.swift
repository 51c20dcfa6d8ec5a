#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A user as the backend keeps it: an object of class `user`.
public struct User: Equatable, Sendable {
  public static let className = "user"
  static let anonymousIdField = "authData.anonymous.id"
  public static let maximumDisplayNameLength = 40

  public let object: DataObject
  public var objectId: String { object.objectId }
  public var userName: String { object["userName"]?.stringValue ?? "" }
  /// The name a person chose; falls back to the generated userName.
  public var displayName: String { object["displayName"]?.stringValue ?? userName }

  public init(object: DataObject) { self.object = object }

  /// What `whoami --json` prints: never the session token.
  public var json: JSONValue {
    .object([
      "objectId": .string(objectId), "userName": .string(userName),
      "displayName": .string(displayName),
      "createDate": .string(BackendDate.string(milliseconds: object.createDate)),
    ])
  }
}

/// A logged-in user with the session token that proves it.
public struct Login: Sendable {
  public let user: User
  public let sessionToken: String
}

extension Datastore {
  /// Anonymous login: the first login with `uuid` creates the user; later ones (after a session
  /// died or expired) get the same user back with a fresh session.
  public func loginAnonymously(uuid: String) throws -> Login {
    guard UUID(uuidString: uuid) != nil else { throw DatastoreError.invalid("uuid") }
    return try master.transaction {
      let query = Query(className: User.className, equalTo: [User.anonymousIdField: .string(uuid)])
      let object =
        try master.find(query).first
        ?? master.create(
          User.className,
          fields: [
            "userName": .string(Validation.randomId(length: 10)),
            "authData": .object(["anonymous": .object(["id": .string(uuid)])]),
          ])
      if object.acl == .publicReadWrite {
        // A user may be read by anyone but changed only by itself.
        try master.update(
          User.className, objectId: object.objectId,
          acl: ACL(readers: ["*"], writers: [object.objectId]))
      }
      let token = Validation.randomId(length: 32)
      let expires = BackendDate.now() + Int64(sessionLifetime * 1000)
      try storage.insertSession(token: token, userId: object.objectId, expiresAt: expires)
      return Login(
        user: User(object: try master.get(User.className, objectId: object.objectId)),
        sessionToken: token)
    }
  }

  /// Ends every session of `userId` (a logout everywhere). Their next request is `E401001`.
  public func endSessions(userId: String) throws {
    try guardStorage { try storage.deleteSessions(userId: userId) }
  }
}

extension DatastoreClient {
  /// The signed-in user; `E401001` without a session.
  public func currentUser() throws -> User {
    guard let userId else { throw DatastoreError(.authentication) }
    return User(object: try get(User.className, objectId: userId))
  }

  /// Sets the signed-in user's display name: 1 to 40 characters, not blank.
  @discardableResult
  public func setDisplayName(_ name: String) throws -> User {
    let trimmed = name.trimmingWhiteSpace()
    guard !trimmed.isEmpty else { throw DatastoreError.empty("displayName") }
    guard trimmed.count <= User.maximumDisplayNameLength else {
      throw DatastoreError.invalid(
        "displayName", "at most \(User.maximumDisplayNameLength) characters")
    }
    guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else { throw DatastoreError.invalid("displayName", "control characters are not allowed") }
    guard let userId else { throw DatastoreError(.authentication) }
    return User(
      object: try update(User.className, objectId: userId, set: ["displayName": .string(trimmed)]))
  }
}
