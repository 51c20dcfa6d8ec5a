/// Password accounts on PostgreSQL (`Accounts.swift`): through the server-only definer functions
/// of `PostgresSchema+Apps.swift` over the owner-only `forum.app_passwords` (schema step 19). A
/// member's connection is refused by them (FA403): members sign in as their database role.
extension PostgresEngine {
  func signUp(userName: String, key: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login
  {
    let token = Validation.randomId(length: 43)
    let hash = SHA256.hash(token)
    let userId = try write {
      try run(
        "SELECT forum.app_sign_up($1, $2, $3, $4::bytea, $5::bigint)",
        [
          .text(userName), .text(key), .text(passwordHash), .bytes(hash),
          .text(String(Int64(sessionLifetime * 1000))),
        ]
      ).text(0, 0)
    }
    guard let userId else {
      throw DatastoreError(.invalid, field: "userName", reason: StoreReason.alreadyExists)
    }
    return try login(userId: userId, token: token, hash: hash)
  }

  func passwordCredential(key: String) throws -> PasswordCredential? {
    let found = try run("SELECT account, hash FROM forum.app_password_of($1)", [.text(key)])
    guard found.rowCount > 0, let userId = found.text(0, 0), let hash = found.text(0, 1) else {
      return nil
    }
    return PasswordCredential(userId: userId, hash: hash)
  }

  func startPasswordSession(userId: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login?
  {
    let token = Validation.randomId(length: 43)
    let hash = SHA256.hash(token)
    let started = try write {
      try run(
        "SELECT forum.app_password_session($1, $2, $3::bytea, $4::bigint)",
        [
          .text(userId), .text(passwordHash), .bytes(hash),
          .text(String(Int64(sessionLifetime * 1000))),
        ]
      ).bool(0, 0)
    }
    guard started else { return nil }
    return try login(userId: userId, token: token, hash: hash)
  }

  func setPassword(userId: String, passwordHash: String, keeping: [UInt8]?, as caller: Principals)
    throws
  {
    guard caller.userId == userId else { throw DatastoreError.noAccess }
    let done = try write {
      try act(as: caller)
      return try run(
        "SELECT forum.app_set_password($1, $2::bytea)",
        [.text(passwordHash), keeping.map { .bytes($0) } ?? .null]
      ).bool(0, 0)
    }
    guard done else {
      throw DatastoreError(.invalid, field: "userName", reason: StoreReason.alreadyExists)
    }
  }

  private func login(userId: String, token: String, hash: [UInt8]) throws -> Login {
    let principals = Principals(userId: userId, sessionHash: hash)
    let user = User(object: try get(User.className, objectId: userId, as: principals))
    return Login(user: user, sessionToken: token, principals: principals)
  }
}
