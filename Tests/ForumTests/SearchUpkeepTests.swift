import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Issue 33: no commit of a person's write merges SQLite's full-text index (FTS5's automerge
/// rewrote a bulk-seeded board's one large segment inside commits: tens of milliseconds at the
/// wrong moment). A commit writes its own small segment; `Board.tidy` merges them in bounded
/// steps between writes, and search finds exactly what it found before, at every moment.
@Suite("search index upkeep (SQLite)")
struct SearchUpkeepTests {
  /// FTS5 segments in the index now (a data page's rowid holds its segment id above bit 37).
  static func segments(_ path: String) throws -> Int64 {
    try Connection(path: path).prepare(
      "SELECT count(DISTINCT id >> 37) FROM search_text_data WHERE id >> 37 > 0"
    ).firstRow { $0.int(0) } ?? 0
  }

  /// Every post `term` finds, across all pages.
  static func found(_ board: Board, _ term: String) throws -> [String] {
    var refs: [String] = []
    var page = 1
    while true {
      let results = try board.search([term], page: page)
      refs += results.items.map(\.ref)
      guard results.hasMore else { return refs }
      page += 1
    }
  }

  @Test func commitsLeaveMergingToTheSteps() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    let thread = try alice.createThread(title: "a thread", description: "", image: nil).number
    // Commits alone: each leaves its own segment, none merges (FTS5's automerge merged after
    // four).
    for number in 1...40 {
      _ = try alice.addComment(to: thread, text: "comment \(number) token\(number)x upkeep")
    }
    let afterCommits = try Self.segments(path)
    #expect(afterCommits >= 40, "\(afterCommits) segments after 41 commits: a commit merged")
    // Every post is found once before any step.
    #expect(try Set(Self.found(alice, "upkeep")).count == 40)
    #expect(try Self.found(alice, "upkeep").count == 40)
    // The steps merge them down; each step is bounded, and a search in between finds the same.
    var steps = 0
    while alice.tidy() {
      steps += 1
      #expect(try Self.found(alice, "token7x") == ["\(thread)/7"])
      if steps > 1_000 { break }
    }
    #expect(steps >= 1 && steps < 1_000, "\(steps) steps")
    let afterSteps = try Self.segments(path)
    #expect(afterSteps < 16, "\(afterSteps) segments after the steps")
    for number in 1...40 {
      #expect(
        try Self.found(alice, "token\(number)x") == ["\(thread)/\(number)"])
    }
    #expect(try Set(Self.found(alice, "upkeep")).count == 40)
    #expect(try Self.found(alice, "upkeep").count == 40)
    // Nothing left to do: another step writes nothing.
    #expect(!alice.tidy())
    let connection = try Connection(path: path)
    try connection.execute(
      "INSERT INTO search_text(search_text, rank) VALUES ('integrity-check', 0)")
  }
}
