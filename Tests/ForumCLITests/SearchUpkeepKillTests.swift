import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Issue 33: the full-text index's merges run in steps between commands (`Board.tidy`), not in
/// the commits. A script killed with SIGKILL again and again, mid-step or mid-commit, leaves an
/// index where search finds every committed comment exactly once and nothing else.
@Suite("search index upkeep killed (SQLite)")
struct SearchUpkeepKillTests {
  @Test func everyCommittedCommentIsFoundOnceAfterKills() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "a thread"])
    let connection = try Connection(path: forum.db)
    func commentIds() throws -> [(Int64, Int64)] {
      try connection.prepare(
        "SELECT id, json_extract(data, '$.number') FROM objects WHERE class = 'Comment'"
      ).rows([]) { ($0.int(0) ?? 0, $0.int(1) ?? 0) }
    }
    // Rounds: a script far longer than what is posted before its kill.
    var posted = 0
    for round in 0..<4 {
      let script = forum.root + "/script-\(round).txt"
      try Data(
        (0..<5_000).map { "comment 1 killed round\(round)x line\($0)x\n" }.joined().utf8
      ).write(to: URL(fileURLWithPath: script))
      let pid = try InterruptedScriptTests.spawn(
        forum.binary, ["--db", forum.db, "--profile", "alice"],
        environment: forum.environment(), stdin: script, stdout: "/dev/null")
      var status: Int32 = 0
      var running = true
      // Kills at a different count each round: after a step, in a commit or in a step.
      while running, try commentIds().count < posted + 150 + 37 * round {
        usleep(2_000)
        running = waitpid(pid, &status, WNOHANG) == 0
      }
      #expect(running, "round \(round): the script ended before its kill")
      if running {
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
      }
      posted = try commentIds().count
    }
    // The index is whole, and holds each committed comment once.
    try connection.execute(
      "INSERT INTO search_text(search_text, rank) VALUES ('integrity-check', 0)")
    let comments = try commentIds()
    #expect(comments.count >= 600)
    func indexed() throws -> [Int64] {
      try connection.prepare(
        "SELECT rowid FROM search_text WHERE search_text MATCH '\"killed\"' ORDER BY rowid"
      ).rows([]) { $0.int(0) ?? 0 }
    }
    // Each committed comment is indexed or queued (`search_pending`), never both.
    let queued = try connection.prepare(
      "SELECT q.id FROM search_pending q JOIN objects o ON o.id = q.id WHERE o.class = 'Comment'"
    ).rows([]) { $0.int(0) ?? 0 }
    #expect(Set(try indexed()).isDisjoint(with: queued))
    #expect((try indexed() + queued).sorted() == comments.map(\.0).sorted())
    // Nothing stays queued: the next process that writes indexes it all in its idle step.
    try forum.ok(["comment", "1", "after the kills"])
    #expect(try indexed() == comments.map(\.0).sorted())
    #expect(
      try connection.prepare("SELECT count(*) FROM search_pending").firstRow { $0.int(0) } == 0)
    // Through the board's search: each comment by its own words, once.
    let board = try forum.openBoard()
    let texts = try connection.prepare(
      "SELECT json_extract(data, '$.number'), json_extract(data, '$.text') FROM objects"
        + " WHERE class = 'Comment' ORDER BY id"
    ).rows([]) { ($0.int(0) ?? 0, try $0.text(1) ?? "") }
    for (number, text) in texts where number % 7 == 0 {
      let words = text.split(separator: " ").map(String.init).suffix(2)
      let found = try board.search(Array(words)).items.map(\.ref)
      #expect(found == ["1/\(number)"], "\(text)")
    }
  }
}
