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
    let connection = try Connection(path: path)
    return try connection.prepare(
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
    // Each commit's row indexed by the idle step after it: a segment each, none merged (FTS5's
    // automerge merged after four).
    _ = alice.tidy(idle: true)
    for number in 1...40 {
      _ = try alice.addComment(to: thread, text: "comment \(number) token\(number)x upkeep")
      #expect(alice.tidy(idle: true))
    }
    let afterCommits = try Self.segments(path)
    #expect(afterCommits >= 40, "\(afterCommits) segments after 41 commits: a commit merged")
    // Every post is found once before any step.
    #expect(try Set(Self.found(alice, "upkeep")).count == 40)
    #expect(try Self.found(alice, "upkeep").count == 40)
    // The steps merge them down; each step is bounded, and a search in between finds the same.
    var steps = 0
    while alice.tidy(idle: true) {
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
    #expect(!alice.tidy(idle: true))
    let connection = try Connection(path: path)
    try connection.execute(
      "INSERT INTO search_text(search_text, rank) VALUES ('integrity-check', 0)")
  }

  static func queued(_ path: String) throws -> [Int64] {
    let connection = try Connection(path: path)
    return try connection.prepare("SELECT id FROM search_pending ORDER BY id").rows {
      $0.int(0)
    }
  }

  static func indexed(_ path: String, _ term: String) throws -> [Int64] {
    let connection = try Connection(path: path)
    return try connection.prepare(
      "SELECT rowid FROM search_text WHERE search_text MATCH ? ORDER BY rowid"
    ).rows([.text("\"\(term)\"")]) { $0.int(0) }
  }

  /// A commit tokenizes nothing: it queues its row (`search_pending`), which search reads
  /// directly, and the steps between writes index the queue in batches. Edits and deletes of
  /// queued and of indexed rows alike leave each row in exactly one of the two.
  @Test func commitsQueueTheirTextOffTheIndex() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    let thread = try alice.createThread(title: "queue thread", description: "", image: nil).number
    while alice.tidy(idle: true) {}
    let before = try Self.segments(path)
    for number in 1...40 {
      _ = try alice.addComment(to: thread, text: "comment \(number) qtoken\(number)x queued 天")
    }
    #expect(try Self.segments(path) == before, "a commit wrote a segment of the index")
    #expect(try Self.queued(path).count == 40)
    // Found as soon as committed, once each, by long and short words.
    #expect(try Self.found(alice, "queued").count == 40)
    #expect(try Set(Self.found(alice, "queued")).count == 40)
    #expect(try Self.found(alice, "qtoken7x") == ["\(thread)/7"])
    #expect(try Self.found(alice, "天").count == 40)
    // Between two writes a short queue waits; an idle step takes it whole, into one segment.
    #expect(!alice.tidy())
    #expect(try Self.queued(path).count == 40)
    #expect(alice.tidy(idle: true))
    #expect(try Self.queued(path).isEmpty)
    #expect(try Self.segments(path) == before + 1)
    #expect(try Self.indexed(path, "queued").count == 40)
    #expect(try Self.found(alice, "queued").count == 40)
    // An indexed row edited goes back to the queue, its old text out of the index; a queued
    // row deleted leaves the queue, an indexed one the index.
    try alice.editComment(3, inThread: thread, text: "rewritten qtoken3x")
    #expect(try Self.queued(path).count == 1)
    #expect(try Self.indexed(path, "queued").count == 39)
    #expect(try Self.found(alice, "qtoken3x") == ["\(thread)/3"])
    #expect(try Self.found(alice, "rewritten") == ["\(thread)/3"])
    _ = try alice.deleteComment(3, inThread: thread)
    _ = try alice.deleteComment(4, inThread: thread)
    #expect(try Self.queued(path).isEmpty)
    #expect(try Self.indexed(path, "queued").count == 38)
    #expect(try Self.found(alice, "qtoken3x").isEmpty)
    #expect(try Self.found(alice, "queued").count == 38)
    let connection = try Connection(path: path)
    try connection.execute(
      "INSERT INTO search_text(search_text, rank) VALUES ('integrity-check', 0)")
  }

  /// A writer that never tidies (the sqlite3 shell, a script killed early) queues no more than
  /// A board whose rows were queued by an insert trigger a class (format 3) gets the one
  /// trigger for all when opened, and keeps its index as it is: nothing indexed again, nothing
  /// found twice or lost, and each class's new rows queued by the new trigger.
  @Test func aBoardOfFormat3GetsOneInsertTriggerAndKeepsItsIndex() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    let thread = try alice.createThread(title: "old heron", description: "", image: nil).number
    // Three segments (indexed by three steps): building the index again makes one a class.
    for number in 1...3 { _ = try alice.addComment(to: thread, text: "old heron \(number)") }
    #expect(alice.tidy(idle: true))
    for number in 4...5 {
      _ = try alice.addComment(to: thread, text: "old heron \(number)")
      #expect(alice.tidy(idle: true))
    }
    #expect(try Self.queued(path).isEmpty)
    #expect(try Self.segments(path) >= 3)
    do {
      // What format 3 left: an insert trigger a class, and its record.
      let connection = try Connection(path: path)
      let record = try #require(
        try connection.prepare("SELECT value FROM meta WHERE key = 'search'").firstRow {
          try $0.text(0)
        } ?? nil)
      #expect(record.hasPrefix("\(SQLiteSearch.format) "))
      try connection.execute("DROP TRIGGER search_insert")
      for className in ["Comment", "Message", "Thread"] {
        try connection.execute(
          """
          CREATE TRIGGER search_insert_\(className) AFTER INSERT ON objects
          WHEN NEW.class = '\(className)' BEGIN
            INSERT INTO search_pending(id) VALUES (NEW.id);
          END
          """)
      }
      try connection.run(
        "UPDATE meta SET value = ? WHERE key = 'search'",
        [.text("3" + record.drop { $0 != " " })])
    }
    let segments = try Self.segments(path)
    let bob = try world.board("bob")
    let connection = try Connection(path: path)
    let inserts = try connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'search\\_insert%' ESCAPE '\\'"
    ).rows { try $0.text(0) ?? "" }
    #expect(inserts == ["search_insert"])
    #expect(try Self.segments(path) == segments, "the index was built again")
    #expect(try Self.queued(path).isEmpty)
    #expect(try Self.found(bob, "heron").count == 6)
    let second = try bob.createThread(title: "new heron", description: "", image: nil).number
    _ = try bob.addComment(to: second, text: "new heron comment")
    #expect(try Self.queued(path).count == 2)
    #expect(try Self.found(bob, "heron").count == 8)
    #expect(try Set(Self.found(bob, "heron")).count == 8)
    try connection.execute(
      "INSERT INTO search_text(search_text, rank) VALUES ('integrity-check', 0)")
  }

  /// `SQLiteSearch.pendingLimit` rows: the commit past it indexes the queue itself.
  @Test func theQueueIsBounded() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    let thread = try alice.createThread(title: "bound", description: "", image: nil).number
    for number in 1...(SQLiteSearch.pendingLimit + 5) {
      _ = try alice.addComment(to: thread, text: "bounded \(number)")
    }
    let queued = try Self.queued(path).count
    #expect(queued <= SQLiteSearch.pendingLimit && queued >= 4, "\(queued) queued")
    #expect(try Self.found(alice, "bounded").count == SQLiteSearch.pendingLimit + 5)
    let connection = try Connection(path: path)
    try connection.execute(
      "INSERT INTO search_text(search_text, rank) VALUES ('integrity-check', 0)")
  }
}
