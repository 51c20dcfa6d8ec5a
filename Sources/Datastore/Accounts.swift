import ForumCrypto

/// Password accounts, as NCMB apps used them (`POST users` with `userName` and `password`,
/// `login`): an app user with a name and a password, beside the anonymous users. The password
/// is hashed here by libsodium's Argon2id (`ForumCrypto.Password`), outside any transaction; the
/// engine stores only the hash, in a table no caller reads through the API (SQLite `passwords`,
/// PostgreSQL's owner-only `forum.app_passwords`), and never in the user object.
/// A password account's name and password, checked before any work.
public enum Account {
  /// Longest `userName`, in characters.
  public static let maximumNameLength = 40

  /// A name is 1 to 40 characters, none of them a space or a control character (it is how the
  /// board's people address the user, `@name`). Two names that differ only in case are one.
  public static func checkName(_ name: String) throws {
    guard !name.isEmpty else { throw DatastoreError.empty("userName") }
    guard name.count <= maximumNameLength else {
      throw DatastoreError.invalid("userName", "at most \(maximumNameLength) characters")
    }
    guard
      !name.unicodeScalars.contains(where: {
        $0.properties.isWhitespace || $0.properties.generalCategory == .control
          || $0.properties.generalCategory == .format
      })
    else { throw DatastoreError.invalid("userName", "no spaces or control characters") }
  }

  /// A password is 1 to `Password.maximumBytes` bytes of UTF-8.
  public static func checkPassword(_ password: String) throws {
    guard !password.isEmpty else { throw DatastoreError.empty("password") }
    guard password.utf8.count <= Password.maximumBytes else {
      throw DatastoreError.invalid("password", "at most \(Password.maximumBytes) bytes")
    }
  }

  /// The key two names that differ only in case share.
  static func key(_ name: String) -> String { name.lowercased() }

  static func hash(_ password: String) throws -> String {
    guard let hash = Password.hash(password) else {
      throw DatastoreError(.systemError, detail: "the password could not be hashed (memory)")
    }
    return hash
  }
}

extension Datastore {
  /// Signs up a new user with `userName` and `password` and starts a session. A name someone
  /// has already (in any case, anonymous users' generated names included) is `E400002` with
  /// `StoreReason.alreadyExists` (NCMB's E409001).
  public func signUp(userName: String, password: String) throws -> Login {
    try Account.checkName(userName)
    try Account.checkPassword(password)
    // Over https the server hashes and keeps it: NCMB's own sign-up carries the password.
    if let remote = engine as? RemoteEngine {
      return try remote.signUp(userName: userName, password: password)
    }
    let hash = try Account.hash(password)
    return try engine.signUp(
      userName: userName, key: Account.key(userName), passwordHash: hash,
      sessionLifetime: sessionLifetime)
  }

  /// A new session for the user named `userName` when `password` is theirs. Refused with
  /// `E401001` and `AccountReason.wrongPassword` alike whether the name is unknown or the
  /// password wrong, after the same work: a name nobody has is checked against
  /// `Password.dummy`.
  public func login(userName: String, password: String) throws -> Login {
    guard !userName.isEmpty, !password.isEmpty, password.utf8.count <= Password.maximumBytes,
      userName.count <= 4 * Account.maximumNameLength
    else {
      _ = Password.verify(password, against: Password.dummy)
      throw DatastoreError(.authentication, reason: AccountReason.wrongPassword)
    }
    if let remote = engine as? RemoteEngine {
      return try remote.logIn(userName: userName, password: password)
    }
    let credential = try engine.passwordCredential(key: Account.key(userName))
    guard Password.verify(password, against: credential?.hash ?? Password.dummy),
      let credential
    else { throw DatastoreError(.authentication, reason: AccountReason.wrongPassword) }
    // Nil when the password changed (or the user went) since it was read.
    guard
      let login = try engine.startPasswordSession(
        userId: credential.userId, passwordHash: credential.hash,
        sessionLifetime: sessionLifetime)
    else { throw DatastoreError(.authentication, reason: AccountReason.wrongPassword) }
    return login
  }
}

extension DatastoreClient {
  /// Sets the signed-in user's password (it becomes a password account under its `userName`
  /// if it was anonymous) and ends its other sessions; the one with `token` goes on.
  public func setPassword(_ password: String, keepingSession token: String?) throws {
    guard let userId else { throw DatastoreError(.authentication) }
    try Account.checkPassword(password)
    let hash = try Account.hash(password)
    try store.engine.setPassword(
      userId: userId, passwordHash: hash, keeping: token.map { SHA256.hash($0) },
      as: principals)
  }
}

/// A password account as the engine keeps it: whose, and the hash (nothing of it public: no
/// engine is reachable from outside Datastore).
public struct PasswordCredential: Sendable {
  let userId: String
  let hash: String
}
