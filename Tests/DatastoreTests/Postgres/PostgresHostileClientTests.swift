import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// A member who connects with libpq (as psql would) and writes SQL by hand can do nothing the
/// board would refuse: every attempt is refused with an error or changes no row, and the whole
/// store is unchanged afterwards.
@Suite("PostgreSQL hostile client")
struct PostgresHostileClientTests {
  /// Alice's data: a public thread with her image, a comment, and a private thread.
  struct AliceData {
    let aliceId: String
    let thread: String
    let comment: String
    let privateThread: String
    let file: String
  }

  static func pointer(_ className: String, _ id: String) -> String {
    #"{"__type":"Pointer","className":"\#(className)","objectId":"\#(id)"}"#
  }

  static func seedAlice(_ board: PostgresTestBoard) throws -> AliceData {
    let alice = try PostgresConnection(uri: board["alice"].uri)
    let aliceId = try #require(try alice.query("SELECT forum.sign_in()").text(0, 0))
    let thread = Validation.randomId()
    let comment = Validation.randomId()
    let privateThread = Validation.randomId()
    let file = "thread1-secret.png"
    try alice.transaction {
      try alice.query(
        """
        INSERT INTO forum.files(name, mime_type, readers, writers, data)
        VALUES ($1, 'image/png', $2, $3, $4)
        """, [.text(file), .text("{*,\(aliceId)}"), .text("{\(aliceId)}"), .bytes([1, 2, 3])])
      try alice.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Thread', $1, $2, $3, $4::jsonb)
        """,
        [
          .text(thread), .text("{*,\(aliceId)}"), .text("{\(aliceId)}"),
          .text(#"{"title":"hello","fileName":"\#(file)","user":\#(pointer("user", aliceId))}"#),
        ])
    }
    try alice.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Comment', $1, '{}', $2, $3::jsonb)
      """,
      [
        .text(comment), .text("{\(aliceId)}"),
        .text(#"{"text":"first","thread":\#(pointer("Thread", thread))}"#),
      ])
    try alice.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Thread', $1, $2, $2, '{"title":"my secret"}'::jsonb)
      """, [.text(privateThread), .text("{\(aliceId)}")])
    return AliceData(
      aliceId: aliceId, thread: thread, comment: comment, privateThread: privateThread, file: file)
  }

  @Test("the engine's rules hold for alice's own writes")
  func rulesOnInsert() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let data = try PostgresHostileClientTests.seedAlice(board)
    let owner = try PostgresConnection(uri: board.owner.uri)
    let thread = try owner.query(
      "SELECT data->>'number', data->>'commentCount', data->>'lastCommentNumber', data->>'user' "
        + "FROM forum.objects WHERE object_id = $1", [.text(data.thread)])
    #expect(thread.text(0, 0) == "1")
    #expect(thread.text(0, 1) == "1")
    #expect(thread.text(0, 2) == "1")
    #expect(thread.text(0, 3)?.contains(data.aliceId) == true)
    let comment = try owner.query(
      "SELECT data->>'number', readers::text FROM forum.objects WHERE object_id = $1",
      [.text(data.comment)])
    #expect(comment.text(0, 0) == "1")
    #expect(comment.text(0, 1) == "{*,\(data.aliceId)}", "a comment's readers are its thread's")
    // A private thread is a row of the owner-only table (issue 22), numbered all the same.
    let secret = try owner.query(
      "SELECT data->>'number' FROM forum.private_objects WHERE object_id = $1",
      [.text(data.privateThread)])
    #expect(secret.text(0, 0) == "2")
  }

  @Test("bob cannot read alice's secrets, nor change or delete any of her rows")
  func hostileMember() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let data = try PostgresHostileClientTests.seedAlice(board)
    let bob = try PostgresConnection(uri: board["bob"].uri)
    let bobId = try #require(try bob.query("SELECT forum.sign_in()").text(0, 0))
    let before = try postgresFingerprint(board)
    let denied: Set<String> = ["42501"]

    // Reading what is not his.
    for table in ["users", "counters"] {
      expectRefused("read forum.\(table)", states: denied) {
        try bob.query("SELECT * FROM forum.\(table)")
      }
    }
    expectRefused("read alice's private thread", states: []) {
      try bob.query("SELECT * FROM forum.objects WHERE object_id = $1", [.text(data.privateThread)])
    }
    expectRefused("count alice's private thread", states: []) {
      try bob.query(
        "SELECT 1 FROM forum.objects WHERE data->>'title' = 'my secret' OR readers = $1",
        [.text("{\(data.aliceId)}")])
    }
    expectRefused("call the counter function", states: denied) {
      try bob.query("SELECT forum.next_value('threadNumber')")
    }

    // Deleting.
    for table in ["objects", "files"] {
      expectRefused("delete every row of forum.\(table)", states: denied) {
        try bob.query("DELETE FROM forum.\(table) RETURNING 1")
      }
    }
    for table in ["users", "counters", "meta"] {
      expectRefused("delete forum.\(table)", states: denied) {
        try bob.query("DELETE FROM forum.\(table) RETURNING 1")
      }
      expectRefused("truncate forum.\(table)", states: denied) {
        try bob.query("TRUNCATE forum.\(table)")
      }
    }
    expectRefused("truncate forum.objects", states: denied) {
      try bob.query("TRUNCATE forum.objects")
    }

    // Updating her rows: data, counters, number, readers, writers.
    let hers = "{\(data.aliceId),\(data.thread),\(data.comment),\(data.privateThread)}"
    let updates = [
      "UPDATE forum.objects SET data = data || '{\"title\":\"pwned\"}' WHERE object_id = ANY($1::text[]) RETURNING 1",
      "UPDATE forum.objects SET writers = writers || $2::text WHERE object_id = ANY($1::text[]) RETURNING 1",
      "UPDATE forum.objects SET readers = '{*}' WHERE object_id = ANY($1::text[]) RETURNING 1",
      "UPDATE forum.files SET writers = writers || $2::text WHERE name <> $1 RETURNING 1",
    ]
    for sql in updates {
      let values: [PostgresValue] =
        sql.contains("$2") ? [.text(hers), .text(bobId)] : [.text(hers)]
      expectRefused(sql, states: denied) { try bob.query(sql, values) }
    }
    for (column, value) in [
      ("class", "'user'"), ("object_id", "'AAAAAAAAAAAAAAAA'"), ("create_date", "0"),
      ("update_date", "0"), ("id", "1"),
    ] {
      expectRefused("update \(column)", states: denied + ["428C9"]) {
        try bob.query("UPDATE forum.objects SET \(column) = \(value) RETURNING 1")
      }
    }
    for table in ["users", "counters", "meta"] {
      expectRefused("update forum.\(table)", states: denied) {
        try bob.query(
          table == "users"
            ? "UPDATE forum.users SET role_name = session_user RETURNING 1"
            : "UPDATE forum.\(table) SET value = '99' RETURNING 1")
      }
    }

    // Inserting: a user row, a mapping, forged authorship, forged counters.
    expectRefused("insert a user mapping to alice's id", states: denied) {
      try bob.query(
        "INSERT INTO forum.users(role_name, user_id) VALUES (session_user, $1) RETURNING 1",
        [.text(data.aliceId)])
    }
    expectRefused("insert a user object", states: denied) {
      try bob.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('user', $1, '{*}', '{*}', '{"userName":"alice"}') RETURNING 1
        """, [.text(Validation.randomId())])
    }
    expectRefused("insert a counter", states: denied) {
      try bob.query("INSERT INTO forum.counters VALUES ('threadNumber', 0) RETURNING 1")
    }
    expectRefused("insert meta", states: denied) {
      try bob.query("INSERT INTO forum.meta VALUES ('schema_version', '0') RETURNING 1")
    }
    expectRefused("a thread written as alice", states: ["FA403"]) {
      try bob.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Thread', $1, '{*}', $2, $3::jsonb) RETURNING 1
        """,
        [
          .text(Validation.randomId()), .text("{\(bobId)}"),
          .text(
            #"{"title":"x","user":\#(PostgresHostileClientTests.pointer("user", data.aliceId))}"#),
        ])
    }
    expectRefused("a thread alice may write", states: ["FA403"]) {
      try bob.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Thread', $1, '{*}', $2, '{"title":"x"}') RETURNING 1
        """, [.text(Validation.randomId()), .text("{\(bobId),\(data.aliceId)}")])
    }
    expectRefused("a comment on alice's private thread", states: ["FA404"]) {
      try bob.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Comment', $1, '{*}', $2, $3::jsonb) RETURNING 1
        """,
        [
          .text(Validation.randomId()), .text("{\(bobId)}"),
          .text(
            #"{"text":"x","thread":\#(PostgresHostileClientTests.pointer("Thread", data.privateThread))}"#
          ),
        ])
    }
    expectRefused("an object with alice's objectId", states: ["23505"]) {
      try bob.query(
        "INSERT INTO forum.objects(class, object_id, readers, writers, data) "
          + "VALUES ('Note', $1, '{*}', '{*}', '{}') RETURNING 1", [.text(data.thread)])
    }
    expectRefused("a file with alice's name", states: ["23505"]) {
      try bob.query(
        "INSERT INTO forum.files(name, mime_type, readers, writers, data) "
          + "VALUES ($1, 'image/png', '{*}', '{*}', '\\x00') RETURNING 1", [.text(data.file)])
    }

    // Changing the schema or the server's rules.
    let ddl = [
      "ALTER TABLE forum.objects DISABLE TRIGGER ALL",
      "ALTER TABLE forum.objects DISABLE ROW LEVEL SECURITY",
      "DROP POLICY member_read ON forum.objects",
      "CREATE TABLE forum.mine(x int)",
      "CREATE OR REPLACE FUNCTION forum.principals() RETURNS text[] LANGUAGE sql AS $$ SELECT '{*}'::text[] $$",
      "SET ROLE \(board.owner.name)",
      "SET SESSION AUTHORIZATION \(board.owner.name)",
      "GRANT forum_role_moderator TO CURRENT_USER",
      "SELECT forum.objects_before_insert()",
    ]
    for sql in ddl {
      expectRefused(sql, states: denied + ["42704", "0A000", "42883", "42P13"]) {
        try bob.query(sql)
      }
    }

    #expect(try postgresFingerprint(board) == before, "the store changed")
  }

  @Test("a member's own rows keep their managed fields whatever he writes")
  func managedFieldsOfOwnRows() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let data = try PostgresHostileClientTests.seedAlice(board)
    let bob = try PostgresConnection(uri: board["bob"].uri)
    let bobId = try #require(try bob.query("SELECT forum.sign_in()").text(0, 0))
    let comment = Validation.randomId()
    // A comment with a forged number, readers and author: the engine sets all three.
    try bob.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Comment', $1, $2, $2, $3::jsonb)
      """,
      [
        .text(comment), .text("{\(bobId)}"),
        .text(
          #"{"text":"hi","number":99,"thread":\#(PostgresHostileClientTests.pointer("Thread", data.thread))}"#
        ),
      ])
    let owner = try PostgresConnection(uri: board.owner.uri)
    func row() throws -> [String?] {
      let result = try owner.query(
        "SELECT data->>'number', readers::text, data->>'user', data->'thread'->>'objectId' "
          + "FROM forum.objects WHERE object_id = $1", [.text(comment)])
      return (0..<4).map { result.text(0, $0) }
    }
    let stored = try row()
    #expect(stored[0] == "2")
    #expect(stored[1] == "{*,\(data.aliceId)}")
    #expect(stored[2]?.contains(bobId) == true)
    let before = try postgresFingerprint(board, updateDates: false)
    // Handing alice the right to delete his comment is refused outright.
    expectRefused("make alice a writer of his comment", states: ["FA403"]) {
      try bob.query(
        "UPDATE forum.objects SET writers = $2 WHERE object_id = $1 RETURNING 1",
        [.text(comment), .text("{\(bobId),\(data.aliceId)}")])
    }
    // Now rewrite every managed field of his own comment: readers, number, author, thread.
    let changed = try bob.query(
      """
      UPDATE forum.objects SET readers = '{*}', data = data || $2::jsonb
      WHERE object_id = $1 RETURNING 1
      """,
      [
        .text(comment),
        .text(
          #"{"number":1,"user":\#(PostgresHostileClientTests.pointer("user", data.aliceId)),"thread":\#(PostgresHostileClientTests.pointer("Thread", data.privateThread))}"#
        ),
      ])
    #expect(changed.rowCount == 1)
    #expect(try row() == stored)
    // Only the update date of his comment may differ.
    #expect(try postgresFingerprint(board, updateDates: false) == before)
  }

  @Test("a member cannot store more than the datastore accepts: a text over 1 MB, a file over 5 MB")
  func oversizedContent() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let data = try PostgresHostileClientTests.seedAlice(board)
    let bob = try PostgresConnection(uri: board["bob"].uri)
    let bobId = try #require(try bob.query("SELECT forum.sign_in()").text(0, 0))
    let own = Validation.randomId()
    try bob.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Note', $1, $2, $3, '{"text":"short"}'::jsonb)
      """, [.text(own), .text("{*,\(bobId)}"), .text("{\(bobId)}")])
    let before = try postgresFingerprint(board, updateDates: false)
    let huge = String(repeating: "x", count: DatastoreClient.maximumTextBytes + 1)
    expectRefused("a 1 MB text in his own object", states: ["23514"]) {
      try bob.query(
        "UPDATE forum.objects SET data = jsonb_set(data, '{text}', to_jsonb($2::text)) "
          + "WHERE object_id = $1 RETURNING 1", [.text(own), .text(huge)])
    }
    expectRefused("a 1 MB text nested in a new object", states: ["23514"]) {
      try bob.query(
        """
        INSERT INTO forum.objects(class, object_id, readers, writers, data)
        VALUES ('Note', $1, $2, $2, jsonb_build_object('a', jsonb_build_array($3::text)))
        RETURNING 1
        """, [.text(Validation.randomId()), .text("{\(bobId)}"), .text(huge)])
    }
    expectRefused("a file over 5 MB", states: ["23514"]) {
      try bob.query(
        """
        INSERT INTO forum.files(name, mime_type, readers, writers, data)
        VALUES ('big.bin', 'application/octet-stream', $1, $1, decode(repeat('00', $2::int), 'hex'))
        RETURNING 1
        """, [.text("{\(bobId)}"), .text(String(Datastore.defaultFileSizeLimit + 1))])
    }
    #expect(try postgresFingerprint(board, updateDates: false) == before)
    _ = data
  }

  /// Issue 28 item 6: a megabyte of `[[0],[0],…]` cost minutes of the server's CPU (the text
  /// check walked it quadratically), holding every other writer behind it. Its cost is measured
  /// in BENCHMARKS.md (`Scripts/bench-pg-write.sh`); here the statement time limit only stops a
  /// test that would otherwise hang for minutes (the check took 146 s for one megabyte, and now
  /// about one second). The limits stay: 100 levels stored, 101 refused, and so is an object
  /// over 2,000,000 bytes or with a text over 1,000,000, nothing stored.
  @Test("a megabyte of nested arrays is written in one pass; 101 levels and 2 MB are still refused")
  func largeObjectsAreCheckedInOnePass() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let engine = try PostgresEngine(uri: board["bob"].uri)
    try engine.prepare(rules: boardRulesForTests, indexes: [])
    let login = try engine.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    try engine.connection.execute("SET statement_timeout = '60s'")
    let acl = ACL(readers: ["*"], writers: [login.user.objectId])
    func bomb(_ count: Int) -> [String: JSONValue] {
      ["a": .array(Array(repeating: .array([.int(0)]), count: count))]
    }
    func nested(_ levels: Int) -> JSONValue {
      var value = JSONValue.array([])
      for level in 1..<levels {
        value = level.isMultiple(of: 2) ? .array([value]) : .object(["a": value])
      }
      return value
    }
    // A request body of 1 MiB (`[0],` four bytes each), and the most that fits: PostgreSQL's
    // text of the object (`[0], ` five bytes each) is 1,310,727 and 1,950,007 bytes.
    for count in [262_144, 390_000] {
      let stored = try engine.insert("Note", fields: bomb(count), acl: acl, as: login.principals)
      guard case .array(let items)? = stored.fields["a"] else {
        Issue.record("\(count): \(stored.fields.keys)")
        continue
      }
      #expect(items.count == count)
    }
    // Texts at the limit, spelled longer than it (each quote and backslash escaped): stored.
    let limit = DatastoreClient.maximumTextBytes
    for fields: [String: JSONValue] in [
      ["deep": nested(100)],
      ["q": .string(String(repeating: "\"", count: 600_000))],
      [
        "t": .string(String(repeating: "x", count: limit)),
        "b": .string(String(repeating: "\\", count: 300_000)),
      ],
    ] {
      _ = try engine.insert("Note", fields: fields, acl: acl, as: login.principals)
    }
    let before = try postgresFingerprint(board, updateDates: false)
    let refused: [(String, [String: JSONValue])] = [
      ("101 levels", ["deep": nested(101)]),
      ("101 levels after a megabyte", bomb(262_144).merging(["deep": nested(101)]) { $1 }),
      ("2,000,007 bytes", bomb(400_000)),
      ("a text of 1,000,001 bytes", ["t": .string(String(repeating: "x", count: limit + 1))]),
      (
        "a text of 1,000,002 bytes in 500,001 characters",
        ["t": .string(String(repeating: "é", count: 500_001))]
      ),
      (
        "a text of 1,000,001 bytes among escapes",
        [
          "t": .string(
            String(repeating: "x", count: limit - 10) + String(repeating: "\"", count: 11)),
          "b": .string(String(repeating: "\\", count: 100)),
        ]
      ),
    ]
    for (name, fields) in refused {
      do {
        _ = try engine.insert("Note", fields: fields, acl: acl, as: login.principals)
        Issue.record("\(name): stored")
      } catch let error as DatastoreError {
        #expect(error.code.rawValue == "E400002", "\(name): \(error)")
      }
    }
    #expect(try postgresFingerprint(board, updateDates: false) == before)
  }

  @Test("a role without forum_member cannot connect, and is told what to ask for")
  func nonMember() throws {
    let board = try installedBoard(members: ["alice"])
    defer { board.remove() }
    let carol = try board.cluster.role("carol", database: board.database)
    do {
      _ = try PostgresConnection(uri: carol.uri)
      Issue.record("carol connected without forum_member")
    } catch let failure as PostgresConnectionFailure {
      #expect(failure.message.contains("permission denied for database"), "\(failure)")
    }
  }
}

extension Set where Element == String {
  fileprivate static func + (lhs: Set<String>, rhs: [String]) -> Set<String> {
    lhs.union(rhs)
  }
}
