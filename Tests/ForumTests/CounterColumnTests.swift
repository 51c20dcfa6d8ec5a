import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Issue 33: a thread's counters live in their own column (`SQLiteRules.counterColumn`), so a
/// comment's insert rewrites a small object there instead of the thread's whole `data`, and no
/// trigger on `UPDATE OF data` (revisions, search, shape, storage) runs for it (BENCHMARKS W16).
@Suite("a parent's counters in their own column (SQLite)")
struct CounterColumnTests {
  /// The thread's stored row: its `data` text and its counters.
  static func stored(_ path: String, number: Int) throws -> (data: String, counts: String?) {
    let connection = try Connection(path: path)
    let row = try connection.prepare(
      """
      SELECT data, counts FROM objects
      WHERE class = 'Thread' AND json_extract(data, '$.number') = ?
      """
    ).firstRow([.integer(Int64(number))]) { (try $0.text(0) ?? "", try $0.text(1)) }
    return try #require(row)
  }

  @Test func aCommentLeavesItsThreadsDataAlone() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let path = world.database.ownerLocation
    let thread = try alice.createThread(title: "counted", description: "here", image: nil).number
    let before = try Self.stored(path, number: thread)
    #expect(!before.data.contains("commentCount") && !before.data.contains("lastActivity"))
    var last: ForumComment?
    for text in ["one", "two", "three"] { last = try bob.addComment(to: thread, text: text) }
    _ = try bob.deleteComment(1, inThread: thread)
    let after = try Self.stored(path, number: thread)
    #expect(after.data == before.data, "a comment rewrote the thread's data")
    let counts = try #require(after.counts.map(JSONValue.parse)?.objectValue)
    #expect(counts["commentCount"] == .int(2) && counts["lastCommentNumber"] == .int(3))
    #expect(counts["lastActivity"] == .int(try #require(last).createDate))
    // Read through the board: one object, as before.
    let read = try alice.thread(thread)
    #expect(read.commentCount == 2 && read.lastCommentNumber == 3 && read.title == "counted")
    #expect(read.lastActivity == (try #require(last)).createDate)
  }

  /// A board whose rules kept the counters in `data` (format 9): the first open of a newer
  /// forum copies them into their column, and moves the indexes made on them, keeping every
  /// thread's counts and the list's order; the list then walks the moved index. A thread past
  /// today's shape limits (kept from before them) stops nothing.
  @Test func aBoardFromBeforeMovesItsCountersOnOpen() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    for title in ["first", "second", "third"] {
      _ = try alice.createThread(title: title, description: "", image: nil)
    }
    _ = try alice.addComment(to: 1, text: "bumps the first")
    _ = try alice.addComment(to: 1, text: "and again")
    let listed = try alice.threads(page: 1).items.map { "\($0.number) \($0.commentCount)" }
    #expect(listed == ["1 2", "3 0", "2 0"])
    do {
      // As format 9 left it: the counters in `data`, the indexes on them reading `data`;
      // thread 2 nested deeper than today's limit (written before the limit, which keeps it).
      let connection = try Connection(path: path)
      let shape = try connection.prepare(
        "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'objects_shape_%'"
      ).rows { try $0.text(0) ?? "" }
      #expect(shape.count == 2)
      try connection.execute(
        """
        DROP TRIGGER objects_shape_insert; DROP TRIGGER objects_shape_update;
        UPDATE objects SET data = json_set(data, '$.deep',
          json(printf('%.*c', 150, '[') || printf('%.*c', 150, ']')))
        WHERE class = 'Thread' AND json_extract(data, '$.number') = 2;
        UPDATE objects SET data = json_patch(data, counts), counts = NULL
        WHERE counts IS NOT NULL;
        UPDATE meta SET value = '9' || substr(value, instr(value, ' ')) WHERE key = 'rules';
        """)
      for sql in shape { try connection.execute(sql) }
      let indexes = try connection.prepare(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql LIKE '%counts%'"
      ).rows { (try $0.text(0) ?? "", try $0.text(1) ?? "") }
      #expect(indexes.count >= 2, "\(indexes)")
      for (name, sql) in indexes {
        try connection.execute("DROP INDEX \"\(name)\"")
        try connection.execute(sql.replacing("json_extract(counts,", with: "json_extract(data,"))
      }
    }
    #expect(try Self.stored(path, number: 1).data.contains("\"commentCount\":2"))
    let reopened = try world.board("carol")
    #expect(
      try reopened.threads(page: 1).items.map { "\($0.number) \($0.commentCount)" } == listed)
    let moved = try Self.stored(path, number: 1)
    let counts = try #require(moved.counts.map(JSONValue.parse)?.objectValue)
    #expect(counts["commentCount"] == .int(2) && counts["lastCommentNumber"] == .int(2))
    #expect(try Self.stored(path, number: 2).counts != nil)
    let connection = try Connection(path: path)
    let onData = try connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql LIKE '%(data, ''$.lastActivity'')%'"
    ).rows { try $0.text(0) ?? "" }
    #expect(onData.isEmpty, "\(onData)")
    // The next comment counts on from the moved counters; the copies left in `data` are
    // never read again.
    _ = try reopened.addComment(to: 2, text: "now the second")
    usleep(5_000)  // a later millisecond: the list's order is by last activity
    _ = try reopened.addComment(to: 1, text: "a third on the first")
    #expect(try reopened.thread(2).commentCount == 1)
    #expect(try reopened.thread(1).commentCount == 3)
    #expect(try Self.stored(path, number: 1).data.contains("\"commentCount\":2"))
    #expect(try reopened.thread(1).lastCommentNumber == 3)
    #expect(try reopened.threads(page: 1).items.map(\.number) == [1, 2, 3])
  }
}

extension CounterColumnTests {
  /// A search's target with a condition on a counter reads the column too (as a listing does).
  @Test func aSearchOnACounterReadsTheColumn() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    _ = try alice.createThread(title: "zebra one", description: "", image: nil)
    _ = try alice.createThread(title: "zebra two", description: "", image: nil)
    _ = try alice.addComment(to: 1, text: "hi")
    func numbers(_ equalTo: [String: JSONValue]) throws -> [JSONValue?] {
      let target = TextSearch.Target(className: Board.threadClass, equalTo: equalTo)
      return try alice.client.search(TextSearch(terms: ["zebra"], targets: [target]))
        .map { $0["number"] }
    }
    #expect(try numbers(["commentCount": .int(1)]) == [.int(1)])
    #expect(try numbers(["commentCount": .int(0)]) == [.int(2)])
    #expect(try numbers(["commentCount": .null]).isEmpty)
  }
}

extension CounterColumnTests {
  /// A process of the forum before format 10, still running when another upgraded the board,
  /// numbers a comment from the copy the thread's `data` keeps: refused (one line, nothing
  /// written), never a second comment with the same number.
  @Test func anOlderForumStillRunningCannotRepeatANumber() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    _ = try alice.createThread(title: "first", description: "", image: nil)
    _ = try alice.addComment(to: 1, text: "one")
    do {
      let connection = try Connection(path: path)
      try connection.execute(
        """
        UPDATE objects SET data = json_patch(data, counts), counts = NULL
        WHERE counts IS NOT NULL;
        UPDATE meta SET value = '9' || substr(value, instr(value, ' ')) WHERE key = 'rules';
        """)
    }
    let upgraded = try world.board("bob")
    // The older forum's INSERT (`SQLiteRules.newRow` before format 10): numbered from `data`.
    func olderForumComments(_ id: String) throws {
      try Connection(path: path).execute(
        """
        INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
        SELECT 'Comment', '\(id)', 1, 1, p.readers, ' x ', json_object('text', 'old',
          'thread', json_object('__type', 'Pointer', 'className', 'Thread', 'objectId', p.objectId),
          'number', coalesce(json_extract(p.data, '$.lastCommentNumber'), 0) + 1)
        FROM objects p WHERE p.class = 'Thread' AND json_extract(p.data, '$.number') = 1
        """)
    }
    // Its first comment after the upgrade is the next number (2): taken, and counted.
    try olderForumComments("olderForum00001")
    #expect(try upgraded.thread(1).lastCommentNumber == 2)
    // Its second would be 2 again: refused.
    #expect(throws: (any Error).self) { try olderForumComments("olderForum00002") }
    _ = try upgraded.addComment(to: 1, text: "three")
    #expect(throws: (any Error).self) { try olderForumComments("olderForum00003") }
    let numbers = try upgraded.comments(of: upgraded.thread(1), page: 1).items.map(\.number)
    #expect(numbers == [1, 2, 3])
    #expect(try upgraded.thread(1).commentCount == 3)
  }
}

extension CounterColumnTests {
  /// The board's owner (the master key) removing a counter of a thread an older forum kept in
  /// `data` too: it is gone from what everyone reads, not shown again from that copy.
  @Test func aCounterRemovedStaysRemoved() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    let path = world.database.ownerLocation
    _ = try alice.createThread(title: "first", description: "", image: nil)
    _ = try alice.addComment(to: 1, text: "one")
    try Connection(path: path).execute(
      """
      UPDATE objects SET data = json_patch(data, counts), counts = NULL WHERE counts IS NOT NULL;
      UPDATE meta SET value = '9' || substr(value, instr(value, ' ')) WHERE key = 'rules';
      """)
    let thread = try world.board("bob").thread(1)
    #expect(thread.commentCount == 1)
    let store = try Datastore(path: path, rules: Board.rules, indexes: Board.indexes)
    _ = try store.master.update(
      Board.threadClass, objectId: thread.objectId, set: ["lastActivity": .null])
    let read = try store.master.get(Board.threadClass, objectId: thread.objectId)
    #expect(read["lastActivity"] == nil && read["commentCount"] == .int(1))
  }
}

/// A read merges a parent's counters over its `data` in Swift (`StoredObject.merge`), as
/// SQLite's `json_patch` did in the listing's SQL: the two agree on every shape a row may hold.
@Suite("a parent's counters merged as they are read")
struct CounterMergeTests {
  static let cases: [(data: String, counts: String)] = [
    (#"{"title":"t","number":3}"#, #"{"commentCount":2,"lastCommentNumber":5}"#),
    (
      #"{"commentCount":1,"lastActivity":{"__type":"Date","iso":"2020-01-01T00:00:00.000Z"}}"#,
      #"{"commentCount":7,"lastActivity":{"__type":"Date","iso":"2026-01-01T00:00:00.000Z"}}"#
    ),
    (#"{"a":{"b":1,"c":2}}"#, #"{"a":{"c":null,"d":[1,2]}}"#),
    (#"{"a":1,"gone":true}"#, #"{"gone":null,"new":null}"#),
    (#"{"a":[1,2,3]}"#, #"{"a":{"x":1}}"#),
    (#"{"a":{"x":1}}"#, #"{"a":"flat"}"#),
    (#"{"a":1}"#, #"{}"#),
  ]

  @Test func theMergeIsSQLitesJSONPatch() throws {
    let connection = try Connection(path: ":memory:")
    for (data, counts) in Self.cases {
      let patched = try #require(
        try connection.prepare("SELECT json_patch(?, ?)").firstRow([.text(data), .text(counts)]) {
          try $0.text(0) ?? ""
        })
      var fields = try #require(try JSONValue.parse(data).objectValue)
      StoredObject.merge(counts, into: &fields, keys: nil)
      #expect(JSONValue.object(fields) == (try JSONValue.parse(patched)), "\(data) + \(counts)")
    }
  }

  @Test func countersThatAreNotAnObjectAreNotRead() throws {
    for counts in ["[1]", "3", "not json", #""text""#, "null"] {
      var fields: [String: JSONValue] = ["a": .int(1)]
      StoredObject.merge(counts, into: &fields, keys: nil)
      #expect(fields == ["a": .int(1)], "\(counts)")
    }
  }

  /// Counters nested past what the reader builds (SQLite's own JSON reads deeper): the rest of
  /// them is read and the object says it is damaged, as `json_patch` and the salvage did.
  @Test func countersNestedTooDeepKeepWhatCanBeRead() {
    let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
    var fields: [String: JSONValue] = ["title": .string("t")]
    let damaged = StoredObject.merge(
      #"{"commentCount":7,"x":"# + deep + #","lastCommentNumber":9}"#, into: &fields, keys: nil)
    #expect(damaged)
    #expect(fields["commentCount"] == .int(7) && fields["title"] == .string("t"))
  }

  @Test func onlyTheKeysAnAnswerAsksFor() {
    var fields: [String: JSONValue] = ["title": .string("t")]
    StoredObject.merge(
      #"{"commentCount":2,"lastActivity":5}"#, into: &fields, keys: ["title", "commentCount"])
    #expect(fields == ["title": .string("t"), "commentCount": .int(2)])
  }
}
