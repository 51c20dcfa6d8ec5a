import Foundation
import Testing

@testable import Datastore

/// Every text and blob (as hex) stored in any table of the SQLite file, read past the Datastore.
func everyStoredString(_ path: String) throws -> Set<String> {
  let connection = try Connection(path: path)
  let tables = try connection.prepare(
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
  ).rows { try $0.text(0) ?? "" }
  var found: Set<String> = []
  for table in tables {
    try connection.prepare("SELECT * FROM \"\(table)\"").forEachRow { row in
      for column in 0..<row.columnCount {
        if let text = try? row.text(column) { found.insert(text) }
        let blob = row.blob(column)
        if !blob.isEmpty { found.insert(blob.map { String(format: "%02x", $0) }.joined()) }
      }
    }
  }
  // Values inside JSON (an anonymous id inside a user's data) count too.
  for text in found where text.hasPrefix("{") {
    if let json = try? JSONValue.parse(text) { found.formUnion(strings(in: json)) }
  }
  return found
}

private func strings(in value: JSONValue) -> [String] {
  switch value {
  case .string(let text): return [text]
  case .array(let values): return values.flatMap(strings(in:))
  case .object(let fields): return fields.values.flatMap(strings(in:))
  default: return []
  }
}

@Suite("Secrets in the database file")
struct SecretTests {
  @Test("no string stored in the file is a session token")
  func sessionsTableHoldsNoUsableToken() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let store = try Datastore(path: path)
      let profiles = ProfileStore(directory: directory.file("profiles"))
      let alice = try store.signIn(profile: "alice", in: profiles)
      _ = try store.signIn(profile: "bob", in: profiles)
      #expect(try rowCount(store, "sessions") == 2)
      let stored = try everyStoredString(path)
      #expect(stored.contains(alice.user.objectId), "the scan sees the rows")
      for candidate in stored where !candidate.isEmpty {
        expectError(.authentication, "\(candidate)") {
          try store.client(sessionToken: candidate).userId
        }
      }
    }
  }

  @Test("what a profile uses on board A gives nothing on board B")
  func oneBoardsSecretIsUselessOnAnother() throws {
    try withTemporaryDirectory { directory in
      let boardA = try Datastore(path: directory.file("a.sqlite"))
      let boardB = try Datastore(path: directory.file("b.sqlite"))
      let profiles = ProfileStore(directory: directory.file("profiles"))
      _ = try boardA.signIn(profile: "alice", in: profiles)
      // Everything alice's profile holds after using board A, as someone who runs board A (or
      // reads a world-readable copy of her profile's secret for it) could learn it.
      let knownOnA = try #require(contents(of: profiles.path(of: "alice")))
      let aliceOnB = try boardB.signIn(profile: "alice", in: profiles)
      let mallory = profiles.path(of: "mallory")
      try Data(knownOnA).write(to: URL(fileURLWithPath: mallory))
      chmod(mallory, 0o600)
      let malloryOnB = try boardB.signIn(profile: "mallory", in: profiles)
      #expect(malloryOnB.user.objectId != aliceOnB.user.objectId)
    }
  }

  @Test("a new database file is 0600; an existing file keeps its mode")
  func databaseFileModes() throws {
    try withTemporaryDirectory { directory in
      let fresh = directory.file("fresh.sqlite")
      let store = try Datastore(path: fresh)
      _ = try store.signIn(profile: "alice", in: ProfileStore(directory: directory.file("p")))
      for suffix in ["", "-wal", "-shm"] {
        #expect(mode(of: fresh + suffix) == 0o600, "\(suffix)")
      }

      // The group setup: an empty file made 0660 by the person who shares it.
      let shared = directory.file("shared.sqlite")
      #expect(FileManager.default.createFile(atPath: shared, contents: nil))
      chmod(shared, 0o660)
      let group = try Datastore(path: shared)
      _ = try group.signIn(profile: "alice", in: ProfileStore(directory: directory.file("p")))
      #expect(mode(of: shared) == 0o660)

      // A board made private later stays private when it is opened again.
      chmod(fresh, 0o640)
      _ = try Datastore(path: fresh).signIn(
        profile: "bob", in: ProfileStore(directory: directory.file("p")))
      #expect(mode(of: fresh) == 0o640)
    }
  }

  @Test("opening takes a file at SQLiteSchema.version as up to date: it is the migrations' count")
  func schemaVersionIsTheMigrationsCount() throws {
    #expect(SQLiteSchema.version == Int64(SQLiteSchema.migrations.steps.count))
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      _ = try Datastore(path: path)
      let connection = try Connection(path: path)
      #expect(try SQLiteSchema.migrations.version(of: connection) == Int(SQLiteSchema.version))
    }
  }

  @Test("a database of the previous version opens; its secrets are hashed, its users kept")
  func previousVersionIsMigrated() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("old.sqlite")
      let uuid = UUID().uuidString.lowercased()
      let token = "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
      let userId = "OldUserAAAAAAAAA"
      let connection = try Connection(path: path)
      guard case .sql(let version1) = SQLiteSchema.migrations.steps[0] else {
        Issue.record("the first migration is SQL")
        return
      }
      try connection.execute(version1)
      try connection.execute(
        """
        INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
        VALUES ('user', '\(userId)', 1, 1, ' * ', ' \(userId) ',
          '{"authData":{"anonymous":{"id":"\(uuid)"}},"userName":"oldname123"}');
        INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
        VALUES ('Thread', 'OldThreadAAAAAAA', 2, 2, ' * \(userId) ', ' \(userId) ',
          '{"title":"old","number":1,"commentCount":0,"lastCommentNumber":0,"lastActivity":2,
            "user":{"__type":"Pointer","className":"user","objectId":"\(userId)"}}');
        INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
        VALUES ('Thread', 'OldPrivateAAAAAA', 3, 3, ' \(userId) ', ' \(userId) ', '{"title":"mine"}');
        INSERT INTO sessions(token, userId, expiresAt) VALUES ('\(token)', '\(userId)', 99999999999999);
        INSERT INTO counters(name, value) VALUES ('threadNumber', 1);
        PRAGMA user_version = 1;
        """)
      // The old profile: one UUID for every board, tokens by database path.
      let profiles = ProfileStore(directory: directory.file("profiles"))
      try FileManager.default.createDirectory(
        atPath: profiles.directory, withIntermediateDirectories: true)
      let profileBody = "{\"uuid\":\"\(uuid)\",\"sessions\":{\"\(path)\":\"\(token)\"}}"
      try Data(profileBody.utf8).write(to: URL(fileURLWithPath: profiles.path(of: "alice")))
      chmod(profiles.path(of: "alice"), 0o600)

      let store = try Datastore(path: path)
      let stored = try everyStoredString(path)
      #expect(!stored.contains(uuid), "the old anonymous id is no longer kept in clear")
      #expect(!stored.contains(token), "the old session token is no longer kept in clear")
      expectError(.authentication) { try store.client(sessionToken: token).userId }
      let alice = try store.signIn(profile: "alice", in: profiles)
      #expect(alice.user.objectId == userId, "the old profile is still the old user")
      #expect(alice.user.userName == "oldname123")
      #expect(try alice.client.count(Query(className: "Thread")) == 2, "her private thread too")
      // Someone else's fresh profile is someone else.
      let bob = try store.signIn(profile: "bob", in: profiles)
      #expect(bob.user.objectId != userId)
      #expect(
        try bob.client.find(Query(className: "Thread")).map(\.objectId) == ["OldThreadAAAAAAA"])
    }
  }
}
