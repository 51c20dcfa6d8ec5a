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

  /// The fields a listing shows of a person (`Query.keys`, `includeKeys`): reading only these,
  /// a user object an app made big costs the reader nothing.
  public static let shownFields: Set<String> = ["userName", "displayName"]

  /// What `whoami --json` prints: never the session token.
  public var json: JSONValue {
    .object([
      "objectId": .string(objectId), "userName": .string(userName),
      "displayName": .string(displayName),
      "createDate": .string(BackendDate.string(milliseconds: object.createDate)),
    ])
  }
}

/// A logged-in user with the session token that proves it and the principals it acts with.
public struct Login: Sendable {
  public let user: User
  public let sessionToken: String
  public let principals: Principals
}

extension Datastore {
  /// A fresh anonymous secret: 43 random letters and digits (about 256 bits).
  public static func newSecret() -> String { Validation.randomId(length: 43) }

  /// Anonymous login with a profile's secret for this board: the first login creates the user;
  /// later ones (after a session died or expired) get the same user back with a fresh session.
  /// `previousSecret` is the UUID a profile of the previous version used on every board: when it
  /// finds a user here, that user is taken over by `secret` (see `DatastoreEngine.signIn`).
  public func loginAnonymously(secret: String, previousSecret: String? = nil) throws -> Login {
    guard Validation.isSecret(secret) else { throw DatastoreError.invalid("secret") }
    if let previousSecret, !Validation.isSecret(previousSecret) {
      throw DatastoreError.invalid("secret")
    }
    return try engine.signIn(
      secret: secret, previousSecret: previousSecret, sessionLifetime: sessionLifetime)
  }

  /// Ends every session of `userId` (a logout everywhere). Their next request is `E401001`.
  public func endSessions(userId: String) throws {
    guard Validation.isObjectId(userId) else { throw DatastoreError.invalid("userId") }
    try engine.endSessions(userId: userId)
  }
}

extension User {
  /// `name` trimmed, when it may be a display name: 1 to 40 characters, no control characters.
  public static func checkedDisplayName(_ name: String) throws -> String {
    let trimmed = name.trimmingWhiteSpace()
    guard !trimmed.isEmpty else { throw DatastoreError.empty("displayName") }
    guard trimmed.count <= maximumDisplayNameLength else {
      throw DatastoreError.invalid("displayName", "at most \(maximumDisplayNameLength) characters")
    }
    guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else { throw DatastoreError.invalid("displayName", "control characters are not allowed") }
    return trimmed
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
    let trimmed = try User.checkedDisplayName(name)
    guard let userId else { throw DatastoreError(.authentication) }
    return User(
      object: try update(User.className, objectId: userId, set: ["displayName": .string(trimmed)]))
  }
}
