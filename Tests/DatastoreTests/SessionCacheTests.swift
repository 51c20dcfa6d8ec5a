import Testing

@testable import Datastore

/// SQLite keeps the sessions it verified (`SQLiteEngine.caller`) until another connection
/// commits or this one writes a session or a role: each test looks a session up first, so
/// that it is kept, then changes what it stands for.
@Suite("Sessions kept by the SQLite engine")
struct SessionCacheTests {
  private func signUp(_ store: Datastore) throws -> (String, String) {
    let login = try store.loginAnonymously(secret: Datastore.newSecret())
    return (login.user.objectId, login.sessionToken)
  }

  @Test func writingObjectsKeepsSessionsButEndingThemDoesNot() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let (alice, token) = try signUp(store)
      let client = try store.client(sessionToken: token)
      #expect(client.userId == alice)
      try client.create("Todo", fields: ["n": .int(1)])
      #expect(try store.client(sessionToken: token).userId == alice)
      try store.endSessions(userId: alice)
      expectError(.authentication) { try store.client(sessionToken: token) }
    }
  }

  @Test func aRoleGrantedOnTheSameConnectionIsInTheNextLookUp() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let (alice, token) = try signUp(store)
      #expect(try store.client(sessionToken: token).principals.names == ["*", alice])
      try store.addMember(alice, toRole: "editors")
      #expect(
        try store.client(sessionToken: token).principals.names == ["*", alice, "role:editors"])
    }
  }

  @Test func anotherConnectionsCommitIsSeen() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let server = try Datastore(path: path)
      let other = try Datastore(path: path)
      let (alice, token) = try signUp(server)
      #expect(try server.client(sessionToken: token).userId == alice)
      try other.addMember(alice, toRole: "editors")
      #expect(try server.client(sessionToken: token).principals.names.contains("role:editors"))
      try other.endSessions(userId: alice)
      expectError(.authentication) { try server.client(sessionToken: token) }
    }
  }
}
