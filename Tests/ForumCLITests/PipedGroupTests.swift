import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Comments a script pipes in faster than they are posted are committed together (issue 33):
/// the lines already waiting, each in its own savepoint, one commit for all. What the script
/// sees must not change: each line's output or error in order, a failing line alone refused.
@Suite("a script's waiting lines committed together")
struct PipedGroupTests {
  @Test func eachLineAnswersAsIfRunAlone() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let result = try forum.script([
      "comment 1 first", "comment 1 second", "comment 9 nowhere", "reply 1/1 an answer",
      "comment --json 1 in json", "comment 1 last",
    ])
    #expect(result.status == 4, "\(result.summary)")
    #expect(result.stderrLines == ["forum: line 3: there is no thread #9"], "\(result.summary)")
    let lines = result.stdoutLines
    #expect(lines.count == 5, "\(result.summary)")
    #expect(Array(lines.prefix(3)) == ["Posted 1/1.", "Posted 1/2.", "Posted 1/3."])
    #expect(lines.count == 5 && lines[3].hasPrefix("{") && lines[3].contains("\"in json\""))
    #expect(lines.last == "Posted 1/5.")
    let stored = try forum.storedComments(ofThread: 1).map { $0["text"] }
    #expect(
      stored == ["first", "second", "an answer", "in json", "last"].map { JSONValue.string($0) })
  }

  /// A first line that prints nothing (refused) proves no log: the next lines are not taken
  /// as a group, and a log that cannot be written stops the script at its first post (64 were
  /// posted unlogged into /dev/full).
  @Test func aSilentFirstLineDoesNotLetAGroupIntoAnUnwritableLog() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let lines = ["comment 99 nowhere"] + (1...10).map { "comment 1 n\($0)" }
    let result = try ForumFixture.launch(
      "/bin/sh",
      arguments: [
        "-c", "\"$0\" --db \"$1\" --profile alice > /dev/full",
        forum.binary, forum.db,
      ],
      environment: forum.environment(),
      input: Data(lines.map { $0 + "\n" }.joined().utf8), timeout: 60)
    #expect(result.status != 0, "\(result.summary)")
    #expect(try forum.storedComments(ofThread: 1).count == 1, "\(result.summary)")
  }

  /// A note a grouped line writes on stderr (a mention that reaches nobody) comes after the
  /// lines before it, as when the lines run one by one (it came right after the first line).
  @Test func aGroupedLinesNoteComesInItsPlace() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    try forum.ok(["name", "Ken"], profile: "ken")
    try forum.ok(["name", "Ken"], profile: "otherken")
    let lines = ["comment 1 first", "comment 1 second", "comment 1 hi @Ken", "comment 1 fourth"]
    let result = try ForumFixture.launch(
      "/bin/sh",
      arguments: ["-c", "\"$0\" --db \"$1\" --profile alice 2>&1", forum.binary, forum.db],
      environment: forum.environment(),
      input: Data(lines.map { $0 + "\n" }.joined().utf8), timeout: 60)
    #expect(result.status == 0, "\(result.summary)")
    let out = result.stdoutLines
    #expect(out.count == 5, "\(result.summary)")
    #expect(Array(out.prefix(3)) == ["Posted 1/1.", "Posted 1/2.", "Posted 1/3."])
    #expect(out.count == 5 && out[3].hasPrefix("forum: nobody was told of @Ken"))
    #expect(out.last == "Posted 1/4.")
  }

  /// On PostgreSQL each line is its own transaction: a group would keep the rows of its earlier
  /// lines locked to its commit, and two scripts on the same threads deadlocked at each retry.
  @Test func onPostgreSQLEachLineAnswersAsIfRunAlone() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let alice = board["alice"].uri
    #expect(try forum.run(["new", "--title", "t"], database: alice).status == 0)
    let script = ["comment 1 first", "comment 1 second", "comment 9 nowhere", "comment 1 last"]
    let result = try forum.run(
      [], input: Data(script.map { $0 + "\n" }.joined().utf8), database: alice)
    #expect(result.status == 4, "\(result.summary)")
    #expect(result.stderrLines == ["forum: line 3: there is no thread #9"], "\(result.summary)")
    #expect(result.stdoutLines == ["Posted 1/1.", "Posted 1/2.", "Posted 1/3."])
    let shown = try forum.run(["show", "1"], database: alice)
    #expect(
      ["first", "second", "last"].allSatisfy { shown.stdout.contains($0) }, "\(shown.summary)")
  }

  @Test func aDraftBetweenWaitingLinesIsReadAsADraft() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let result = try forum.script([
      "comment 1 a", "comment 1 b", "comment 1", "drafted text", ".", "comment 1 c",
      "comment 1 d",
    ])
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdoutLines == (1...5).map { "Posted 1/\($0)." }, "\(result.summary)")
    let stored = try forum.storedComments(ofThread: 1).map { $0["text"] }
    #expect(stored == ["a", "b", "drafted text", "c", "d"].map { JSONValue.string($0) })
  }

  /// Another reader sees the comments arrive a group at a time: the first line alone (its output
  /// shows the log can be written), then the waiting lines 64 at once. One by one (main before
  /// this), it saw counts in between.
  @Test func waitingLinesArriveTogether() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let count = 1 + 64 * 6
    let script = forum.root + "/script.txt"
    try Data((1...count).map { "comment 1 line \($0)\n" }.joined().utf8).write(
      to: URL(fileURLWithPath: script))
    let reader = try Connection(path: forum.db)
    func comments() throws -> Int64 {
      try reader.prepare("SELECT count(*) FROM objects WHERE class = 'Comment'").firstRow {
        $0.int(0)
      } ?? -1
    }
    let pid = try InterruptedScriptTests.spawn(
      forum.binary, ["--db", forum.db, "--profile", "alice"], environment: forum.environment(),
      stdin: script, stdout: forum.root + "/log.txt")
    var seen = Set<Int64>()
    var status: Int32 = 0
    var running = true
    let deadline = Date().addingTimeInterval(120)
    while running, Date() < deadline {
      seen.insert(try comments())
      running = waitpid(pid, &status, WNOHANG) == 0
    }
    if running {
      kill(pid, SIGKILL)
      waitpid(pid, &status, 0)
    }
    seen.insert(try comments())
    #expect(status == 0, "status \(status)")
    let boundaries = Set([0, 1] + (1...6).map { Int64(1 + 64 * $0) })
    let between = seen.subtracting(boundaries).sorted()
    #expect(between.isEmpty, "\(between.count) counts seen between groups: \(between.prefix(5))…")
    #expect(seen.contains(Int64(count)))
    let log = try String(contentsOfFile: forum.root + "/log.txt", encoding: .utf8)
    #expect(log.split(separator: "\n").map(String.init) == (1...count).map { "Posted 1/\($0)." })
  }
}
