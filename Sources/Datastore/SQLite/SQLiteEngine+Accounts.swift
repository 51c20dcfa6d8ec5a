/// Password accounts on SQLite (`Accounts.swift`): the `passwords` table (migration 19), read and
/// written only here; the hashes are made by the caller.
extension SQLiteEngine {
  func signUp(userName: String, key: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login
  {
    noteIdentityWrite()
    return try transaction {
      try guarded {
        try checkNameFree(userName: userName, key: key)
        let id = Validation.randomId()
        try connection.run(
          """
          INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
          VALUES (?, ?, \(SQLiteRules.now), \(SQLiteRules.now), ' * ', ?, ?)
          """,
          [
            .text(User.className), .text(id), .text(" \(id) "),
            .text(JSONValue.object(["userName": .string(userName)]).jsonText()),
          ])
        try connection.run(
          "INSERT INTO passwords(key, userId, passwordHash) VALUES (?, ?, ?)",
          [.text(key), .text(id), .text(passwordHash)])
        return try newSession(userId: id, sessionLifetime: sessionLifetime)
      }
    }
  }

  /// `E400002` on `userName` when the key is a password account's or the name (in any case)
  /// is a user's.
  private func checkNameFree(userName: String, key: String) throws {
    let taken =
      try connection.prepare("SELECT 1 FROM passwords WHERE key = ?").firstRow([.text(key)]) {
        $0.int(0)
      } != nil
      || (try connection.prepare(
        """
        SELECT 1 FROM objects WHERE class = 'user'
          AND lower(json_extract(data, '$.userName')) = lower(?)
        """
      ).firstRow([.text(userName)]) { $0.int(0) }) != nil
    if taken {
      throw DatastoreError(.invalid, field: "userName", reason: StoreReason.alreadyExists)
    }
  }

  func passwordCredential(key: String) throws -> PasswordCredential? {
    try guarded {
      try connection.prepare("SELECT userId, passwordHash FROM passwords WHERE key = ?")
        .firstRow([.text(key)]) {
          PasswordCredential(userId: try $0.text(0) ?? "", hash: try $0.text(1) ?? "")
        }
    }
  }

  func startPasswordSession(userId: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login?
  {
    noteIdentityWrite()
    return try transaction {
      try guarded {
        let current = try connection.prepare(
          "SELECT 1 FROM passwords WHERE userId = ? AND passwordHash = ?"
        ).firstRow([.text(userId), .text(passwordHash)]) { $0.int(0) }
        guard current != nil else { return nil }
        return try newSession(userId: userId, sessionLifetime: sessionLifetime)
      }
    }
  }

  func setPassword(userId: String, passwordHash: String, keeping: [UInt8]?, as caller: Principals)
    throws
  {
    guard caller.userId == userId else { throw DatastoreError.noAccess }
    noteIdentityWrite()
    try transaction {
      try guarded {
        let changed = try connection.prepare(
          "UPDATE passwords SET passwordHash = ? WHERE userId = ? RETURNING 1"
        ).firstRow([.text(passwordHash), .text(userId)]) { $0.int(0) }
        if changed == nil {
          // An anonymous user takes a password account under its name.
          let user = User(object: try get(User.className, objectId: userId, as: .master))
          try checkNameFree(userName: "", key: Account.key(user.userName))
          try connection.run(
            "INSERT INTO passwords(key, userId, passwordHash) VALUES (?, ?, ?)",
            [.text(Account.key(user.userName)), .text(userId), .text(passwordHash)])
        }
        try connection.run(
          "DELETE FROM sessions WHERE userId = ? AND tokenHash IS NOT ?",
          [.text(userId), keeping.map { .blob($0) } ?? .null])
      }
    }
  }

  /// A new session for `userId` (only the token's SHA-256 is stored) and the user's login.
  private func newSession(userId: String, sessionLifetime: Double) throws -> Login {
    let user = try get(User.className, objectId: userId, as: .master)
    let token = Validation.randomId(length: 43)
    try connection.run(
      "INSERT INTO sessions(tokenHash, userId, expiresAt) VALUES (?, ?, \(SQLiteRules.now) + ?)",
      [.blob(SHA256.hash(token)), .text(userId), .integer(Int64(sessionLifetime * 1000))])
    let roles = try connection.prepare(
      "SELECT role FROM role_members WHERE userId = ? ORDER BY role"
    ).rows([.text(userId)]) { try $0.text(0) ?? "" }
    return Login(
      user: User(object: user), sessionToken: token,
      principals: Principals(userId: userId, roles: roles))
  }
}
