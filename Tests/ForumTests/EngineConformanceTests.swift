import EngineTestSupport
import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore
@testable import Forum

/// One scripted board replayed on every engine: after each step, everything each person can read
/// (list, every thread with its comments, unread, search, inbox, history) as the JSON `--json`
/// prints, and the change feed each person sees. Ids and dates are random, so they are replaced:
/// an id by the order it first appears in, a date by its rank among all the dates of the run
/// (the steps are a few milliseconds apart, so equal ranks mean the same moment). Anything else
/// that differs between two engines is a disagreement a user could see.
@Suite("The engines agree")
struct EngineConformanceTests {
  /// The people of the script, signed in on one engine.
  private final class World {
    let database: TestDatabase
    let root: String
    var boards: [(name: String, board: Board)] = []
    /// Where each person's feed reader is (`ChangeBatch.next`): the engines' own sequence
    /// numbers, used and never compared.
    var cursors: [String: Int64] = [:]

    init(_ engine: any EngineFixture) throws {
      database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
      root = try makeTemporaryDirectory("EngineConformanceTests")
      let profiles = ProfileStore(directory: root + "/profiles")
      // The owner first: on SQLite the first user owns the board; on PostgreSQL a member of
      // `forum_owner` does. A PostgreSQL-backed server makes none of its app users the owner:
      // there the owner is that database role, working on the database itself.
      let postgres = database.backing ?? database
      let ownerWorksOnTheDatabase = postgres.engine == PostgresFixture().description
      if ownerWorksOnTheDatabase {
        try BoardWorld.grantBoardOwner(to: try postgres.location(as: "owner"))
      }
      for person in ["owner", "alice", "bob", "carol"] {
        let location =
          person == "owner" && ownerWorksOnTheDatabase
          ? try postgres.location(as: person) : try database.location(as: person)
        boards.append(
          (person, try Board(location: location, profile: person, profiles: profiles)))
      }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    subscript(_ name: String) -> Board { boards.first { $0.name == name }!.board }
  }

  /// What every person reads now, one line per read.
  private static func reads(_ world: World) -> [String] {
    var lines: [String] = []
    func read(_ person: String, _ what: String, _ body: () throws -> String) {
      do {
        lines.append("\(person) \(what): \(try body())")
      } catch let error as DatastoreError {
        lines.append("\(person) \(what): error \(error.code.rawValue)")
      } catch {
        lines.append("\(person) \(what): error \(error)")
      }
    }
    func text(_ values: [JSONValue]) -> String { JSONValue.array(values).jsonText() }
    for (person, board) in world.boards {
      read(person, "list") { text(try board.threads(page: 1).items.map(\.json)) }
      let numbers = (try? board.threads(page: 1).items.map(\.number)) ?? []
      for number in numbers {
        read(person, "show \(number)") {
          let thread = try board.thread(number)
          return text([thread.json] + (try board.comments(of: thread, page: 1).items.map(\.json)))
        }
        read(person, "history \(number)") {
          text(
            try board.history(of: number, comment: nil).page.items.map {
              .array([.int(Int64($0.number)), .int($0.date), .object($0.fields)])
            })
        }
      }
      read(person, "unread") { text(try board.unreadThreads(page: 1).items.map(\.json)) }
      // Ranking is the one thing engines may differ in (SQLite ranks by relevance, PostgreSQL
      // newest first; DEVELOPERS.md): the results are compared in the order of their refs.
      read(person, "search keyboard") {
        text(
          try board.search(["keyboard"]).items.sorted { $0.ref < $1.ref }.map {
            .array([.string($0.ref), $0.json])
          })
      }
      read(person, "search zq") { text(try board.search(["zq"]).items.map(\.json)) }
      read(person, "inbox") { text(try board.conversations(page: 1).items.map(\.json)) }
      read(person, "marks") {
        let marks = try board.marks()
        return "muted \(marks.muted.sorted()) followed \(marks.followed.sorted())"
      }
      for conversation in (try? board.conversations(page: 1).items) ?? [] {
        read(person, "dm \(conversation.objectId)") {
          text(try board.messages(in: conversation, page: 1).items.map(\.json))
        }
      }
      read(person, "unread --count") {
        let summary = try board.unreadSummary()
        return "\(summary.newThreads) \(summary.newComments) \(summary.threadsWithComments) "
          + "\(summary.messages) \(summary.more)"
      }
      func described(_ change: Change) -> String {
        "\(change.className) \(change.kind) \(change.objectId) \(change.parentId ?? "-") "
          + "\(change.number ?? -1)"
      }
      read(person, "feed") {
        try board.changes(since: 0, limit: 1000).changes.map(described).joined(separator: "; ")
      }
      // As a live reader reads it: from where it was, two changes a batch, until no more.
      read(person, "feed since the last step") {
        var batches: [String] = []
        var cursor = world.cursors[person] ?? 0
        while true {
          let batch = try board.changes(since: cursor, limit: 2)
          batches.append(batch.changes.map(described).joined(separator: "; "))
          cursor = batch.next
          if !batch.hasMore || batches.count > 100 { break }
        }
        world.cursors[person] = cursor
        return batches.joined(separator: " | ")
      }
    }
    return lines
  }

  /// The script: each step writes something, then everyone reads everything.
  private static func transcript(_ engine: any EngineFixture) throws -> [String] {
    let world = try World(engine)
    var lines: [String] = []
    var starts: [Int64] = []
    func step(_ name: String, _ body: () throws -> Void) {
      starts.append(Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
      do {
        try body()
        lines.append("step \(name): done")
      } catch let error as DatastoreError {
        lines.append("step \(name): error \(error.code.rawValue)")
      } catch {
        lines.append("step \(name): error \(error)")
      }
      // The next step starts in a later millisecond than any write of this one.
      usleep(3000)
      lines += reads(world)
    }
    let alice = world["alice"]
    let bob = world["bob"]
    let carol = world["carol"]
    step("owner makes carol a moderator") {
      try world["owner"].setModerator(handle: carol.me.userName, true)
      try carol.refresh()
    }
    step("alice posts #1") {
      try alice.createThread(title: "Keyboard keyboard", description: "keys", image: nil)
    }
    step("bob posts #2") {
      try bob.createThread(title: "Lunch", description: "where to eat today", image: nil)
    }
    step("bob comments on #1") {
      try bob.addComment(
        to: 1, text: "mine is a loud keyboard, with many more words after it than before")
    }
    step("carol comments on #1") {
      try carol.addComment(
        to: 1, text: "a quiet keyboard is what I would buy, said nobody at any time ever")
    }
    step("alice comments on #2") { try alice.addComment(to: 2, text: "the noodle place") }
    // Pins (a `FlagRule`): list order, `pinnedDate`, the feed's update, refusals.
    step("alice pins #2 (refused)") { try alice.pin(2, true) }
    step("carol pins #1") { try carol.pin(1, true) }
    step("the owner pins #2") { try world["owner"].pin(2, true) }
    step("carol pins #2 again") { try carol.pin(2, true) }
    step("carol unpins #1") { try carol.pin(1, false) }
    step("bob unpins #2 (refused)") { try bob.pin(2, false) }
    step("bob reads #1") { try bob.markRead(try bob.thread(1), upTo: 2) }
    step("alice edits #1") {
      try alice.editThread(1, title: "Keyboards keyboard", description: nil)
    }
    step("bob edits 1/1") {
      try bob.editComment(1, inThread: 1, text: "mine is a loud keyboard, very loud, honestly")
    }
    step("bob edits alice's #1 (refused)") {
      try bob.editThread(1, title: "mine", description: nil)
    }
    step("alice sends bob a message") { try alice.sendMessage(to: bob.me.userName, text: "hi") }
    step("bob answers") { try bob.sendMessage(to: alice.me.userName, text: "keyboard?") }
    step("alice reads bob's answer") {
      try alice.markRead(try alice.conversation(with: bob.me.userName), upTo: 2)
    }
    step("carol writes to herself (refused)") {
      try carol.sendMessage(to: carol.me.userName, text: "me")
    }
    step("alice posts a private #3") {
      let me = alice.me.objectId
      try alice.client.create(
        Board.threadClass,
        fields: ["title": .string("private keyboard"), "description": .string("mine")],
        acl: ACL(readers: [me], writers: [me]))
    }
    step("bob comments on #3 (not found)") { try bob.addComment(to: 3, text: "let me in") }
    // A thread's readers may change (an app's ACL): its comments follow, and on PostgreSQL the
    // rows change tables (issue 22), keeping their numbers, counts, revisions and positions.
    func setReaders(_ board: Board, _ number: Int, everyone: Bool) throws {
      let me = board.me.objectId
      let found = try board.client.find(
        Query(className: Board.threadClass, equalTo: ["number": .int(Int64(number))]))
      let thread = try #require(found.first)
      try board.client.update(
        Board.threadClass, objectId: thread.objectId,
        acl: everyone ? .publicRead(owner: me) : ACL(readers: [me], writers: [me]))
    }
    step("alice comments on her private #3") { try alice.addComment(to: 3, text: "keyboard note") }
    step("alice edits her private #3") {
      try alice.editThread(3, title: "private keyboards", description: nil)
    }
    step("alice reads her private #3") { try alice.markRead(try alice.thread(3), upTo: 1) }
    step("alice opens #3 to everyone") { try setReaders(alice, 3, everyone: true) }
    step("bob comments on #3") { try bob.addComment(to: 3, text: "a keyboard, at last") }
    step("alice closes #3 again") { try setReaders(alice, 3, everyone: false) }
    step("bob comments on #3 (not found again)") { try bob.addComment(to: 3, text: "hello?") }
    step("alice follows #3 and mutes #1, bob mutes #1") {
      try alice.mark(3, .follow)
      try alice.mark(1, .mute)
      try bob.mark(1, .mute)
    }
    step("alice unmutes #1") { try alice.unmark(1, .mute) }
    step("carol takes down bob's 1/1") { try carol.deleteComment(1, inThread: 1) }
    step("carol takes down bob's #2") { try carol.deleteThread(2) }
    step("alice deletes carol's 1/2 (refused)") { try alice.deleteComment(2, inThread: 1) }
    step("carol deletes her own 1/2") { try carol.deleteComment(2, inThread: 1) }
    step("alice comments on #1 twice") {
      try alice.addComment(to: 1, text: "third")
      try alice.addComment(to: 1, text: "fourth")
    }
    // A count written by hand, lower than the comments there (an old bug, an edit with sqlite3
    // or psql): deleting a comment must not take it below zero. On PostgreSQL the server dates
    // the owner's edit; on SQLite the hand edit does as much itself.
    step("the owner writes #1's count as 0 by hand") {
      try world.database.executeAsOwner(
        sqlite: """
          UPDATE objects SET counts = json_set(counts, '$.commentCount', 0),
            updateDate = max(updateDate + 1,
              CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER))
          WHERE class = 'Thread' AND json_extract(data, '$.number') = 1
          """,
        postgres: """
          UPDATE forum.objects SET data = data || '{"commentCount": 0}'
          WHERE class = 'Thread' AND data->>'number' = '1'
          """)
    }
    step("alice deletes 1/3") { try alice.deleteComment(3, inThread: 1) }
    step("alice deletes #1") { try alice.deleteThread(1) }
    step("alice deletes her private #3") { try alice.deleteThread(3) }
    // Handles are random too: each is replaced by its person's name.
    let handles = world.boards.map { ($0.board.me.userName, "handle-" + $0.name) }
    return normalized(
      lines.map { line in handles.reduce(line) { $0.replacing($1.0, with: $1.1) } },
      stepStarts: starts)
  }

  /// Ids by first appearance, dates (ISO text or milliseconds) by the step that wrote them.
  /// A date's rank is how many steps had started by then: PostgreSQL dates each statement by the
  /// clock and SQLite each transaction, so one step's writes (a conversation and its first
  /// message) may be milliseconds apart on one engine and the same millisecond on the other.
  static func normalized(_ lines: [String], stepStarts: [Int64]) -> [String] {
    let idPattern = try! Regex(#"\b[A-Za-z0-9]{16}\b"#).wordBoundaryKind(.simple)
    let isoPattern = try! Regex(#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#)
    let millisecondsPattern = try! Regex(#"\b1[7-9][0-9]{11}\b"#).wordBoundaryKind(.simple)
    let iso = ISO8601DateFormatter()
    iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    func milliseconds(_ text: Substring) -> Int64 {
      Int64((iso.date(from: String(text))?.timeIntervalSince1970 ?? 0) * 1000)
    }
    var dates = Set<Int64>()
    for line in lines {
      for match in line.matches(of: isoPattern) { dates.insert(milliseconds(line[match.range])) }
      for match in line.matches(of: millisecondsPattern) {
        dates.insert(Int64(line[match.range]) ?? 0)
      }
    }
    let ranks = Dictionary(
      uniqueKeysWithValues: dates.map { date in (date, stepStarts.count { $0 <= date }) })
    var ids: [Substring: Int] = [:]
    return lines.map { line in
      let original = line
      var line = original.replacing(isoPattern) {
        "date\(ranks[milliseconds(original[$0.range])] ?? -1)"
      }
      let withDates = line
      line = withDates.replacing(millisecondsPattern) {
        "\"date\(ranks[Int64(withDates[$0.range]) ?? 0] ?? -1)\""
      }
      let withRanks = line
      return canonical(
        withRanks.replacing(idPattern) { match in
          let id = withRanks[match.range]
          if ids[id] == nil { ids[id] = ids.count + 1 }
          return "id\(ids[id]!)"
        })
    }
  }

  /// A read's JSON with its keys sorted: the order of an object's keys means nothing.
  private static func canonical(_ line: String) -> String {
    guard let colon = line.range(of: ": "),
      let value = try? JSONSerialization.jsonObject(
        with: Data(line[colon.upperBound...].utf8), options: [.fragmentsAllowed]),
      let sorted = try? JSONSerialization.data(
        withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    else { return line }
    return String(line[..<colon.upperBound]) + String(decoding: sorted, as: UTF8.self)
  }

  @Test("one script gives the same reads and the same feeds on every engine")
  func sameBoard() throws {
    let engines = EngineFixtures.withRemote
    let first = try Self.transcript(engines[0])
    for engine in engines.dropFirst() {
      let other = try Self.transcript(engine)
      let differences = zip(first, other).enumerated().filter { $0.element.0 != $0.element.1 }
      #expect(
        first.count == other.count, "\(engines[0]) \(first.count) lines, \(engine) \(other.count)")
      for (index, pair) in differences.prefix(6) {
        Issue.record(
          "line \(index):\n  \(engines[0]): \(pair.0)\n  \(engine): \(pair.1)")
      }
      #expect(differences.isEmpty, "\(differences.count) lines differ")
    }
  }

  /// A hand edit (`executeAsOwner`) is done when every reader sees it: the script's next step
  /// reads at once. Over https the server sees a write made past it once its last look at the
  /// database is `recheckMilliseconds` old, so the remote fixture waits that long; a server
  /// that looks only once a second makes the wait, and a read that came before it, plain.
  @Test("the owner's hand edit is what the next read shows, on every engine")
  func aHandEditIsSeenByTheNextRead() throws {
    let slowLook = RemoteFixture(over: SQLiteFixture(), recheckMilliseconds: 1000)
    for engine in EngineFixtures.withRemote + [slowLook] {
      let world = try World(engine)
      try world["alice"].createThread(title: "Keyboard", description: "keys", image: nil)
      try world["bob"].addComment(to: 1, text: "mine is loud")
      let before = try world["owner"].threads(page: 1).items.map(\.commentCount)
      try world.database.executeAsOwner(
        sqlite: """
          UPDATE objects SET counts = json_set(counts, '$.commentCount', 7), updateDate = updateDate + 1
          WHERE class = 'Thread'
          """,
        postgres: """
          UPDATE forum.objects SET data = data || '{"commentCount": 7}' WHERE class = 'Thread'
          """)
      let after = try world["owner"].threads(page: 1).items.map(\.commentCount)
      #expect(before == [1] && after == [7], "\(engine): \(before) then \(after)")
    }
  }

  /// An object's size and depth are bounded by the engine itself, the same on each (PostgreSQL
  /// a check, SQLite triggers): whatever writes it, an app through `forum serve` included.
  @Test("an object over 2,000,000 bytes or nested over 100 levels is refused on every engine")
  func objectShapeIsTheEngines() throws {
    // `levels` arrays and objects, one in another: the innermost is at that level of the object.
    func nested(_ levels: Int, innermost: JSONValue?) -> JSONValue {
      var value: JSONValue = innermost.map { .array([$0]) } ?? .array([])
      for level in 1..<levels {
        value = level.isMultiple(of: 2) ? .array([value]) : .object(["a": value])
      }
      return value
    }
    let text = JSONValue.string(String(repeating: "x", count: 900_000))
    let cases: [(String, [String: JSONValue])] = [
      ("two texts of 900 kB", ["a": text, "b": text]),
      ("three texts of 900 kB", ["a": text, "b": text, "c": text]),
      ("100 levels", ["deep": nested(100, innermost: nil)]),
      ("101 levels", ["deep": nested(101, innermost: nil)]),
      ("a number at level 101", ["deep": nested(100, innermost: .int(1))]),
      ("5000 levels", ["deep": nested(5000, innermost: nil)]),
    ]
    var outcomes: [String] = []
    for engine in EngineFixtures.withRemote {
      let database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
      let root = try makeTemporaryDirectory("EngineConformanceTests")
      defer { try? FileManager.default.removeItem(atPath: root) }
      let store = try Datastore.open(
        try database.location(as: "alice"), rules: Board.rules, indexes: Board.indexes)
      let (client, _) = try store.signIn(
        profile: "alice", in: ProfileStore(directory: root + "/profiles"))
      let note = try client.create("Note", fields: ["n": .int(0)])
      for (name, fields) in cases {
        for write in ["create", "update"] {
          do {
            if write == "create" {
              _ = try client.create("Note", fields: fields)
            } else {
              _ = try client.update("Note", objectId: note.objectId, set: fields)
            }
            outcomes.append("\(engine) \(write) \(name): stored")
          } catch let error as DatastoreError {
            outcomes.append("\(engine) \(write) \(name): \(error.code.rawValue)")
          }
        }
      }
    }
    let expected = ["stored", "E400002", "stored", "E400002", "E400002", "E400002"]
    #expect(
      outcomes
        == EngineFixtures.withRemote.flatMap { engine in
          zip(cases, expected).flatMap { item in
            ["create", "update"].map { "\(engine) \($0) \(item.0.0): \(item.1)" }
          }
        })
  }

  /// The size limits belong to the board: a process that opens it with a higher limit gets the
  /// board's, the same on every engine (the server enforces it whatever a client asks).
  @Test("a file over 5 MB is refused on every engine, whatever limit the opener asked for")
  func fileLimitIsTheBoards() throws {
    var outcomes: [String] = []
    for engine in EngineFixtures.withRemote {
      let database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
      let root = try makeTemporaryDirectory("EngineConformanceTests")
      defer { try? FileManager.default.removeItem(atPath: root) }
      let store = try Datastore.open(
        try database.location(as: "alice"), rules: Board.rules, indexes: Board.indexes,
        fileSizeLimit: 8 * 1024 * 1024)
      let (client, _) = try store.signIn(
        profile: "alice", in: ProfileStore(directory: root + "/profiles"))
      let bytes = [UInt8](repeating: 7, count: Datastore.defaultFileSizeLimit + 1)
      do {
        try client.putFile(name: "big.bin", bytes: bytes, mimeType: "application/octet-stream")
        outcomes.append("\(engine): stored")
      } catch let error as DatastoreError {
        outcomes.append("\(engine): \(error.code.rawValue)")
      }
      #expect(store.fileSizeLimit == Datastore.defaultFileSizeLimit, "\(engine)")
    }
    #expect(outcomes == EngineFixtures.withRemote.map { "\($0): E413001" })
  }
}
