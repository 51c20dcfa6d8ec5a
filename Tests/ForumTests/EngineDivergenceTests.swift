import EngineTestSupport
import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore
@testable import Forum

/// Each way the engines once disagreed (issue 20), on its own: every engine runs the same
/// steps and the outcomes are compared with each other and with what a user expects, so a
/// test fails by name if one engine drifts again. The conformance script covers them too, in
/// one long transcript.
@Suite("the engines agree, one divergence at a time")
struct EngineDivergenceTests {
  /// Boards of `people` on `engine`, the first one owning it.
  private static func boards(_ engine: any EngineFixture, _ people: [String]) throws
    -> (world: BoardWorld, boards: [Board])
  {
    let world = try BoardWorld(engine)
    if people.contains("owner"), engine.description == PostgresFixture().description {
      // On PostgreSQL the board's owner is a member of `forum_owner`.
      let connection = try PostgresConnection(uri: try world.database.location(as: "owner"))
      let role = try #require(try connection.query("SELECT session_user::text").text(0, 0))
      _ = try PostgresTestCluster.shared().admin(
        """
        DO $$ BEGIN CREATE ROLE forum_owner NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
        GRANT forum_owner TO \(role)
        """)
    }
    return (world, try people.map { try world.board($0) })
  }

  private static func feed(_ board: Board) throws -> [String] {
    try board.changes(since: 0, limit: 1000).changes.map {
      "\($0.className) \($0.kind)"
    }
  }

  /// A comment moves its thread's last activity, not its `updateDate`, and adds one change to
  /// the feed (the comment's), no "thread updated" (PostgreSQL once did both).
  @Test func aCommentMovesOnlyItsThreadsActivity() throws {
    var outcomes: [String] = []
    for engine in EngineFixtures.all {
      let (world, boards) = try Self.boards(engine, ["alice", "bob"])
      defer { withExtendedLifetime(world) {} }
      let (alice, bob) = (boards[0], boards[1])
      try alice.createThread(title: "dates", description: "", image: nil)
      let before = try alice.thread(1)
      let feedBefore = try Self.feed(alice)
      usleep(3000)
      let comment = try bob.addComment(to: 1, text: "a comment")
      let after = try alice.thread(1)
      let added = try Self.feed(alice).dropFirst(feedBefore.count)
      outcomes.append(
        "\(engine): updateDate \(after.json.objectValue?["updateDate"] == before.json.objectValue?["updateDate"] ? "kept" : "moved"), "
          + "lastActivity \(after.lastActivity == comment.createDate ? "the comment's" : "\(after.lastActivity - before.lastActivity) ms later"), "
          + "feed +\(Array(added))")
    }
    #expect(
      outcomes
        == EngineFixtures.all.map {
          "\($0): updateDate kept, lastActivity the comment's, feed +[\"Comment created\"]"
        })
  }

  /// A count written lower than the comments there (by hand, or by an old bug) never goes
  /// below zero when a comment is deleted (SQLite once went to -1).
  @Test func aCountNeverGoesBelowZero() throws {
    var outcomes: [String] = []
    for engine in EngineFixtures.all {
      let (world, boards) = try Self.boards(engine, ["alice"])
      let alice = boards[0]
      try alice.createThread(title: "counted", description: "", image: nil)
      try alice.addComment(to: 1, text: "one")
      try alice.addComment(to: 1, text: "two")
      try world.database.executeAsOwner(
        sqlite: """
          UPDATE objects SET counts = json_set(counts, '$.commentCount', 0)
          WHERE class = 'Thread' AND json_extract(data, '$.number') = 1
          """,
        postgres: """
          UPDATE forum.objects SET data = data || '{"commentCount": 0}'
          WHERE class = 'Thread' AND data->>'number' = '1'
          """)
      try alice.deleteComment(2, inThread: 1)
      let stored = try world.inspector().find(
        Query(className: Board.threadClass, equalTo: ["number": .int(1)]))
      outcomes.append(
        "\(engine): \(stored.first?["commentCount"]?.intValue.map(String.init) ?? "none")")
    }
    #expect(outcomes == EngineFixtures.all.map { "\($0): 0" })
  }

  /// The same search finds the same posts on every engine, whatever the order each ranks them
  /// in (the one difference DEVELOPERS.md allows): long words, a two-letter word, two words,
  /// nothing, and never a private thread to someone else or a taken-down post.
  @Test func aSearchFindsTheSamePostsOnEveryEngine() throws {
    var found: [String: [String]] = [:]
    for engine in EngineFixtures.all {
      let (world, boards) = try Self.boards(engine, ["owner", "alice", "bob", "carol"])
      let (owner, alice, bob, carol) = (boards[0], boards[1], boards[2], boards[3])
      try owner.setModerator(handle: carol.me.userName, true)
      try carol.refresh()
      try alice.createThread(title: "apple pie", description: "an apple a day", image: nil)
      try bob.createThread(title: "green apples", description: "ok", image: nil)
      try bob.addComment(to: 1, text: "apple tart, not pie")
      try alice.addComment(to: 2, text: "ok apple")
      try carol.addComment(to: 2, text: "pie for the apple thread")
      try carol.deleteComment(1, inThread: 2)  // a moderator takes down alice's 2/1
      let me = alice.me.objectId
      try alice.client.create(
        Board.threadClass,
        fields: ["title": .string("secret apple ok"), "description": .string("")],
        acl: ACL(readers: [me], writers: [me]))
      try alice.sendMessage(to: bob.me.userName, text: "apple ok?")
      defer { withExtendedLifetime(world) {} }
      var lines: [String] = []
      for (name, board) in [("alice", alice), ("bob", bob), ("carol", carol)] {
        for words in [["apple"], ["apple", "pie"], ["ok"], ["zq"], ["APPLE", "tart"]] {
          let first = try board.search(words).items.map(\.ref)
          let again = try board.search(words).items.map(\.ref)
          #expect(first == again, "\(engine) \(name) \(words): one order each time")
          // A message's ref names its conversation by the other person's (random) handle.
          let refs = first.map { ref in
            boards.reduce(ref) { $0.replacing($1.me.userName + "/", with: "\($1.profileName)/") }
          }
          lines.append("\(name) \(words.joined(separator: " ")): \(refs.sorted())")
        }
      }
      found["\(engine)"] = lines
    }
    let engines = EngineFixtures.all.map(\.description)
    for engine in engines.dropFirst() {
      #expect(found[engine] == found[engines[0]], "\(engines[0]) vs \(engine)")
    }
    // What a user expects, on the first engine (so on every one).
    let first = found[engines[0]] ?? []
    #expect(first.contains(#"bob apple: ["1", "1/1", "2", "2/2", "@alice/1"]"#), "\(first)")
    #expect(first.contains(#"alice apple: ["1", "1/1", "2", "2/2", "3", "@bob/1"]"#), "\(first)")
    #expect(first.contains(#"carol apple: ["1", "1/1", "2", "2/2"]"#), "\(first)")
    #expect(first.contains(#"bob zq: []"#), "\(first)")
  }

  /// Texts are held to 1,000,000 bytes on every engine, and PostgreSQL's own checks (which a
  /// member with psql meets) are rendered from the same Swift limits as the client's, for
  /// texts and files (they were literals once).
  @Test func theTextLimitIsTheBoardsOnEveryEngine() throws {
    var outcomes: [String] = []
    for engine in EngineFixtures.all {
      let database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
      let root = try makeTemporaryDirectory("EngineDivergenceTests")
      defer { try? FileManager.default.removeItem(atPath: root) }
      let store = try Datastore.open(
        try database.location(as: "alice"), rules: Board.rules, indexes: Board.indexes)
      let (client, _) = try store.signIn(
        profile: "alice", in: ProfileStore(directory: root + "/profiles"))
      for size in [DatastoreClient.maximumTextBytes, DatastoreClient.maximumTextBytes + 1] {
        do {
          _ = try client.create(
            "Note", fields: ["text": .string(String(repeating: "x", count: size))])
          outcomes.append("\(engine) \(size): stored")
        } catch let error as DatastoreError {
          outcomes.append("\(engine) \(size): \(error.code.rawValue)")
        }
      }
    }
    let limit = DatastoreClient.maximumTextBytes
    #expect(
      outcomes
        == EngineFixtures.all.flatMap {
          ["\($0) \(limit): stored", "\($0) \(limit + 1): E400002"]
        })

    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    try Datastore.initialize(board.owner.uri, rules: Board.rules, indexes: Board.indexes)
    let checks = try board.cluster.admin(
      """
      SELECT string_agg(pg_get_constraintdef(oid), ' | ' ORDER BY conname) FROM pg_constraint
      WHERE conname IN ('objects_texts_within', 'private_objects_texts_within', 'files_within',
                        'private_files_within')
      """, database: board.database)
    #expect(
      checks.components(separatedBy: "texts_within(data, \(limit))").count == 3, "\(checks)")
    #expect(
      checks.components(separatedBy: "octet_length(data) <= \(Datastore.defaultFileSizeLimit)")
        .count == 3, "\(checks)")
  }
}
