import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Eight processes, each its own database role, comment on one thread at once over PostgreSQL.
@Suite("PostgreSQL concurrent writers")
struct PostgresConcurrencyTests {
  @Test("8 processes × 250 comments: every row stored, numbers unique and gapless, counters right")
  func eightProcessesHammerOneThread() throws {
    let executable = try #require(
      benchExecutable(), "forum-bench was not built next to the test runner; run `swift build`")
    let processes = 8
    let count = 250
    let tags = (0..<processes).map { "p\($0)" }
    let board = try installedBoard(members: tags)
    defer { board.remove() }
    // Thread #1 exists before the race (the hammer makes it only when it is missing).
    let author = try Datastore.open(board[tags[0]].uri, rules: boardRulesForTests)
    let login = try author.loginAnonymously(secret: Datastore.newSecret())
    try author.client(login).create(
      "Thread", fields: ["title": .string("hammered")],
      acl: .publicRead(owner: login.user.objectId))

    try withTemporaryDirectory { directory in
      let children = try tags.map { tag in
        try Child(
          executable, ["hammer", "--db", board[tag].uri, "--count", String(count), "--tag", tag],
          outputPrefix: directory.file("hammer-\(tag)"))
      }
      for child in children { try child.start() }
      for child in children {
        let status = child.wait(timeout: 300)
        #expect(status == 0, "stdout: \(child.stdout) stderr: \(child.stderr)")
        #expect(child.stderr.isEmpty, "\(child.stderr)")
      }
    }

    let cluster = board.cluster
    func scalar(_ sql: String) throws -> String {
      try cluster.admin(sql, database: board.database).trimmingCharacters(
        in: .whitespacesAndNewlines)
    }
    let total = processes * count
    #expect(try scalar("SELECT count(*) FROM forum.objects WHERE class = 'Thread'") == "1")
    #expect(try scalar("SELECT count(*) FROM forum.objects WHERE class = 'Comment'") == "\(total)")
    #expect(
      try scalar(
        "SELECT count(DISTINCT (data->>'number')::int) || ' ' || min((data->>'number')::int) || ' '"
          + " || max((data->>'number')::int) FROM forum.objects WHERE class = 'Comment'")
        == "\(total) 1 \(total)", "numbers unique and gapless")
    #expect(
      try scalar(
        "SELECT (data->>'commentCount') || ' ' || (data->>'lastCommentNumber') "
          + "FROM forum.objects WHERE class = 'Thread'") == "\(total) \(total)", "counters right")
    for tag in tags {
      #expect(
        try scalar(
          "SELECT count(DISTINCT data->>'index') || ' ' || count(DISTINCT data->'user') "
            + "FROM forum.objects WHERE data->>'tag' = '\(tag)'") == "\(count) 1",
        "every comment of \(tag) stored once, as its own author")
    }
  }
}
