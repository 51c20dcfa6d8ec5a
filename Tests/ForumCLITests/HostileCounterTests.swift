import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// A member with `sqlite3` can write any number into a thread's counters (README, trust model).
/// Whoever then opens the thread must get a page or one clear line, never a crash.
@Suite("a thread whose counters were written by hand")
struct HostileCounterTests {
  @Test(
    arguments: ["commentCount", "lastCommentNumber"], [Int64.max, Int64.max - 5, -1])
  func aHugeOrNegativeCounterIsNoCrash(_ field: String, _ count: Int64) throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t", "--description", "d"])
    try forum.ok(["comment", "1", "first"], profile: "bob")
    do {
      let connection = try Connection(path: forum.db)
      try connection.run(
        "UPDATE objects SET counts = json_set(counts, '$.' || ?, ?) WHERE class = 'Thread'",
        [.text(field), .integer(count)])
    }
    for command in [["show", "1"], ["show", "1", "--page", "last"], ["list"], ["unread"]] {
      let result = try forum.run(command, profile: "carol")
      // A page, or one line saying why not. A trap (SIGILL is 4, like "not found") says nothing.
      if result.status != 0 {
        #expect(
          result.stderrLines.count == 1 && result.stderr.hasPrefix("forum: "), "\(result.summary)")
      }
      #expect(!result.stderr.contains("crash"), "\(result.summary)")
    }
  }

  /// Issue 22: `show --page last` of a thread whose count was written by hand stopped failing,
  /// but its footer still gave pages from the written count ("page 1/50000000000"). The footer
  /// and `--json`'s count tell what the reader can see. The forged counts: one far past the
  /// last number, and both counters forged alike.
  static let forgeries: [[String: Int64]] = [
    ["commentCount": 1_000_000_000_000],
    ["commentCount": 100_000_000, "lastCommentNumber": 100_000_000],
  ]

  /// What carol reads of thread 1 (three comments) once its counters say otherwise.
  static func expectTrueFooter(
    _ forum: ForumFixture, database: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    for command in [
      ["show", "1"], ["show", "1", "--page", "last"], ["show", "1", "--page", "1"],
    ] {
      let shown = try forum.run(command, profile: "carol", database: database)
      #expect(shown.status == 0, "\(shown.summary)", sourceLocation: sourceLocation)
      #expect(shown.stdout.contains("third"), "\(shown.summary)", sourceLocation: sourceLocation)
      #expect(
        shown.stdoutLines.last == "page 1/1", "\(shown.summary)", sourceLocation: sourceLocation)
    }
    let json = try forum.run(["--json", "show", "1"], profile: "carol", database: database)
    #expect(json.status == 0, "\(json.summary)", sourceLocation: sourceLocation)
    let object = try json.json()
    #expect(object["count"] as? Int == 3, "\(json.summary)", sourceLocation: sourceLocation)
    #expect(object["hasMore"] as? Bool == false, "\(json.summary)", sourceLocation: sourceLocation)
  }

  @Test(
    "a forged comment count: the footer tells the pages there are (SQLite)", arguments: forgeries)
  func forgedCountFooterSQLite(_ forged: [String: Int64]) throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    for text in ["first", "second", "third"] {
      try forum.ok(["comment", "1", text], profile: "bob")
    }
    // A member with sqlite3 writes the thread's counters.
    let connection = try Connection(path: forum.db)
    for (field, value) in forged.sorted(by: { $0.key < $1.key }) {
      try connection.run(
        "UPDATE objects SET counts = json_set(counts, '$.' || ?, ?) WHERE class = 'Thread'",
        [.text(field), .integer(value)])
    }
    try HostileCounterTests.expectTrueFooter(forum)
  }

  @Test(
    "a forged comment count: the footer tells the pages there are (PostgreSQL)",
    arguments: forgeries)
  func forgedCountFooterPostgres(_ forged: [String: Int64]) throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board(members: ["alice", "bob", "carol"])
    defer { board.remove() }
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    for member in ["alice", "bob", "carol"] {
      try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
    }
    #expect(
      try forum.run(["new", "--title", "t"], profile: "alice", database: board["alice"].uri)
        .status == 0)
    for text in ["first", "second", "third"] {
      #expect(
        try forum.run(["comment", "1", text], profile: "bob", database: board["bob"].uri)
          .status == 0)
    }
    var data = "data"
    for (field, value) in forged.sorted(by: { $0.key < $1.key }) {
      data = "jsonb_set(\(data), '{\(field)}', '\(value)')"
    }
    // A member with psql cannot: the server keeps the counters (refused or kept).
    _ = try ForumFixture.launch(
      board.cluster.binaries + "/psql",
      arguments: [
        "-X", "-q", "-At", "-d", board["alice"].uri, "-c",
        "UPDATE forum.objects SET data = \(data) WHERE class = 'Thread'",
      ], environment: forum.environment(), input: Data(), timeout: 60)
    let kept = try board.cluster.admin(
      "SELECT data->>'commentCount' FROM forum.objects WHERE class = 'Thread'",
      database: board.database)
    #expect(kept.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
    // The database's superuser can, past the triggers.
    try board.cluster.admin(
      """
      SET session_replication_role = replica;
      UPDATE forum.objects SET data = \(data) WHERE class = 'Thread'
      """, database: board.database)
    try HostileCounterTests.expectTrueFooter(forum, database: board["carol"].uri)
  }
}
