import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// `forum serve` on PostgreSQL acts for the apps' anonymous users (`forum.act_as`, issue 18); a
/// member with psql must get none of that: not with another user's session token in hand, not by
/// setting `forum.acting` themselves, not by signing an app user in, not by reading the keys.
@Suite("PostgreSQL server identity")
struct PostgresActAsTests {
  /// A board with a server role and one app user who keeps a private thread.
  struct Served {
    let board: PostgresTestBoard
    let server: PostgresTestRole
    let store: Datastore
    let appUser: String
    let token: String
    let secret: String
    let privateThread: String
  }

  static func served() throws -> Served {
    let board = try installedBoard(members: ["alice", "mallory"])
    let server = try board.cluster.role("server", database: board.database)
    try board.cluster.admin("GRANT forum_member, forum_server TO \(server.name)")
    let store = try Datastore.open(server.uri)
    let secret = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    let login = try store.loginAnonymously(secret: secret)
    let app = store.client(login)
    let thread = try app.create(
      "Thread", fields: ["title": .string("only mine")],
      acl: ACL(readers: [login.user.objectId], writers: [login.user.objectId]))
    return Served(
      board: board, server: server, store: store, appUser: login.user.objectId,
      token: login.sessionToken, secret: secret, privateThread: thread.objectId)
  }

  static func hashLiteral(_ text: String) -> String {
    "'\\x" + SHA256.hex(SHA256.hash(text)) + "'::bytea"
  }

  @Test("the server sees what its app user may, and nothing once that session ends")
  func theServerActsForItsUsersOnly() throws {
    let served = try PostgresActAsTests.served()
    defer { served.board.remove() }
    let app = try served.store.client(sessionToken: served.token)
    #expect(app.userId == served.appUser)
    #expect(try app.get("Thread", objectId: served.privateThread)["title"] == .string("only mine"))
    // The same connection, for a request without a session: the thread is not there.
    let nobody = try served.store.client(sessionToken: nil)
    #expect(throws: DatastoreError.notFound) {
      try nobody.get("Thread", objectId: served.privateThread)
    }
    #expect(try nobody.find(Query(className: "Thread")).isEmpty)
    // Not only narrowed by the principals it was given: the connection itself is nobody now
    // (the rules' triggers ask the server who the caller is), and the app user again after.
    let engine = try #require(served.store.engine as? PostgresEngine)
    #expect(try engine.connection.query("SELECT forum.caller_id()").isNull(0, 0))
    _ = try app.get("Thread", objectId: served.privateThread)
    #expect(try engine.connection.query("SELECT forum.caller_id()").text(0, 0) == served.appUser)
    // Another app user made by the same server sees nothing of it either.
    let other = served.store.client(
      try served.store.loginAnonymously(secret: "3F2504E0-4F89-11D3-9A0C-0305E82C3302"))
    #expect(try other.find(Query(className: "Thread")).isEmpty)
    // Signing in again with the same anonymous id is the same user.
    #expect(
      try served.store.loginAnonymously(secret: served.secret).user.objectId == served.appUser)
    // The server's own connection names a session by its hash; after a logout the token is
    // refused, and a connection that acted for it no longer does.
    let raw = try PostgresConnection(uri: served.server.uri)
    try raw.execute(
      "SELECT set_config('forum.acting', encode(\(PostgresActAsTests.hashLiteral(served.token)), "
        + "'hex'), false)")
    #expect(try raw.query("SELECT forum.caller_id()").text(0, 0) == served.appUser)
    try served.store.endSessions(userId: served.appUser)
    #expect(throws: DatastoreError(.authentication)) {
      try served.store.client(sessionToken: served.token)
    }
    #expect(try raw.query("SELECT forum.caller_id()").isNull(0, 0))
    #expect(throws: DatastoreError.notFound) {
      try app.get("Thread", objectId: served.privateThread)
    }
  }

  @Test("a member with psql cannot act as an app user, even holding the user's token")
  func aMemberCannotActAsAnyone() throws {
    let served = try PostgresActAsTests.served()
    defer { served.board.remove() }
    let mallory = try PostgresConnection(uri: served.board["mallory"].uri)
    let malloryId = try #require(try mallory.query("SELECT forum.sign_in()").text(0, 0))
    let before = try postgresFingerprint(served.board)
    let hash = PostgresActAsTests.hashLiteral(served.token)

    expectRefused("act_as with the token's hash", states: ["FA403"]) {
      try mallory.query("SELECT forum.act_as(\(hash))")
    }
    expectRefused("signing the app user in again", states: ["FA403"]) {
      try mallory.query(
        "SELECT forum.app_sign_in(\(PostgresActAsTests.hashLiteral(served.secret)), "
          + "\(PostgresActAsTests.hashLiteral("mine-now")), 100000)")
    }
    expectRefused("ending the app user's sessions", states: ["FA403"]) {
      try mallory.query("SELECT forum.end_app_sessions($1)", [.text(served.appUser)])
    }
    expectRefused("reading the keys", states: ["FA403"]) {
      try mallory.query("SELECT * FROM forum.application_keys(false, false)")
    }
    expectRefused("making keys", states: ["FA403"]) {
      try mallory.query("SELECT * FROM forum.application_keys(true, true)")
    }
    for table in ["secrets", "app_identities", "app_sessions"] {
      expectRefused("reading forum.\(table)", states: ["42501"]) {
        try mallory.query("SELECT * FROM forum.\(table)")
      }
    }
    expectRefused("becoming the server role", states: ["42501", "22023"]) {
      try mallory.query("SET ROLE forum_server")
    }
    // The setting act_as uses, set by hand: it counts for a server only.
    try mallory.execute(
      "SELECT set_config('forum.acting', encode(\(hash), 'hex'), false)")
    #expect(try mallory.query("SELECT forum.caller_id()").text(0, 0) == malloryId)
    #expect(
      try mallory.query("SELECT forum.principals()::text").text(0, 0) == "{*,\(malloryId)}")
    expectRefused("reading the private thread", states: []) {
      try mallory.query(
        "SELECT 1 FROM forum.objects WHERE object_id = $1", [.text(served.privateThread)])
    }
    expectRefused("updating the private thread", states: ["42501"]) {
      try mallory.query(
        "UPDATE forum.objects SET data = '{\"title\":\"mallory was here\"}' "
          + "WHERE object_id = $1 RETURNING 1", [.text(served.privateThread)])
    }
    expectRefused("deleting the private thread", states: ["FA403"]) {
      try mallory.query(
        "SELECT 1 WHERE forum.delete_object('Thread', $1, NULL)", [.text(served.privateThread)])
    }
    #expect(try postgresFingerprint(served.board) == before)
    // And the app user still reads it (the refusals above were not for want of a thread).
    let app = try served.store.client(sessionToken: served.token)
    #expect(try app.get("Thread", objectId: served.privateThread)["title"] == .string("only mine"))
  }

  @Test("keys: the owner makes and rotates them, a server reads them, a member never")
  func keysAreTheOwnersAndTheServers() throws {
    let served = try PostgresActAsTests.served()
    defer { served.board.remove() }
    let owner = try Datastore.open(served.board.owner.uri)
    let made = try owner.applicationKeys()
    #expect(made.applicationKey.count == 64 && made.clientKey.count == 64)
    #expect(made.applicationKey != made.clientKey)
    #expect(try served.store.existingApplicationKeys() == made)
    #expect(throws: DatastoreError.self) { try served.store.applicationKeys(rotate: true) }
    let rotated = try owner.applicationKeys(rotate: true)
    #expect(rotated != made)
    #expect(try served.store.applicationKeys() == rotated)
    let alice = try Datastore.open(served.board["alice"].uri)
    #expect(throws: DatastoreError.self) { try alice.existingApplicationKeys() }
  }
}
