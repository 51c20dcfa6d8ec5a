import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// `Board.search` checked against a brute-force oracle over the same seeded board, on every
/// engine: random texts (Japanese, mixed case, FTS syntax), several people, private threads
/// (readable by their author, or by two people, as conversations are) and their comments,
/// edits and deletions. For each person and query: every readable match is found, nothing
/// unreadable or unmatched comes back, and no result comes twice across the pages.
@Suite("search oracle")
struct SearchOracleTests {
  static let vocabulary = [
    "天気", "今日", "猫", "ラーメン", "駅前", "カフェ", "雨", "写真", "週末", "天ぷら",
    "keyboard", "Keyboard", "KEYBOARD", "linux", "Build", "train", "meetup", "cat", "recipe",
    "\"quoted\"", "a*b", "x-y", "col:on", "NEAR", "50%", "a_b", "é", "É", "🐈",
  ]

  /// A text of a few vocabulary words, joined by spaces or Japanese punctuation.
  static func text(_ random: inout SeededRandom, words: ClosedRange<Int>) -> String {
    (0..<Int.random(in: words, using: &random)).map { _ in
      vocabulary.randomElement(using: &random)!
    }.joined(separator: Bool.random(using: &random) ? " " : "、")
  }

  @Test(arguments: EngineFixtures.withRemote)
  func everyReadableMatchAndNothingElse(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let people = ["alice", "bob", "carol"]
    let boards = try people.map { try world.board($0) }
    let ids = boards.map(\.me.objectId)
    var random = SeededRandom(seed: 12)
    var threadNumbers: [Int] = []
    for round in 0..<24 {
      let author = Int.random(in: 0..<3, using: &random)
      let board = boards[author]
      let title = Self.text(&random, words: 1...3)
      let description = Self.text(&random, words: 0...5)
      switch round % 4 {
      case 0:
        // Private to its author.
        threadNumbers.append(
          try privateThread(board, title, description, readers: [ids[author]]))
      case 1:
        // A conversation-like thread: two readers.
        let other = (author + 1) % 3
        threadNumbers.append(
          try privateThread(board, title, description, readers: [ids[author], ids[other]]))
      default:
        threadNumbers.append(
          try board.createThread(title: title, description: description, image: nil).number)
      }
    }
    // Comments by whoever may read the thread.
    for _ in 0..<60 {
      let number = threadNumbers.randomElement(using: &random)!
      let readers = boards.filter { (try? $0.thread(number)) != nil }
      guard let board = readers.randomElement(using: &random) else { continue }
      try board.addComment(to: number, text: Self.text(&random, words: 1...6))
    }
    // Conversations: searchable by their two members only.
    for _ in 0..<12 {
      let from = Int.random(in: 0..<3, using: &random)
      let to = (from + Int.random(in: 1...2, using: &random)) % 3
      try boards[from].sendMessage(
        to: boards[to].me.userName, text: Self.text(&random, words: 1...5))
    }
    // Edits and deletions go through the index too.
    let first = try boards[0].client.find(
      Query(
        className: Board.threadClass,
        equalTo: ["user": .pointer(className: "user", objectId: ids[0])], limit: 2))
    if let edited = first.first {
      try boards[0].client.update(
        Board.threadClass, objectId: edited.objectId,
        set: ["title": .string("edited 天気 keyboard"), "description": .null])
    }
    if first.count > 1 { try boards[0].deleteThread(Int(first[1]["number"]?.intValue ?? 0)) }
    let someComment = try boards[1].client.find(
      Query(
        className: Board.commentClass,
        equalTo: ["user": .pointer(className: "user", objectId: ids[1])], limit: 1))
    if let comment = someComment.first {
      try boards[1].client.delete(Board.commentClass, objectId: comment.objectId)
    }

    let all = try world.inspector()
    let threads = try all.find(Query(className: Board.threadClass, limit: 1000))
    let comments = try all.find(Query(className: Board.commentClass, limit: 1000))
    let threadById = Dictionary(uniqueKeysWithValues: threads.map { ($0.objectId, $0) })
    let messages = try all.find(Query(className: Board.messageClass, limit: 1000))
    let conversations = try all.find(Query(className: Board.conversationClass, limit: 1000))
    let conversationById = Dictionary(
      uniqueKeysWithValues: conversations.map { ($0.objectId, $0) })
    let userNames = Dictionary(
      uniqueKeysWithValues: boards.map { ($0.me.objectId, $0.me.userName) })
    #expect(messages.count == 12)

    var queries: [[String]] = [
      ["天気"], ["天"], ["keyboard"], ["KEYBOARD"], ["猫"], ["天気", "keyboard"], ["\"quoted\""],
      ["a*b"], ["NEAR"], ["50%"], ["a_b"], ["x-y"], ["col:on"], ["é"], ["🐈"], ["ラーメン 駅前"],
      ["eyb"], ["ke"], ["天気、猫"], ["absent"],
    ]
    for _ in 0..<8 {
      let word = Self.vocabulary.randomElement(using: &random)!
      let scalars = Array(word.unicodeScalars)
      let start = Int.random(in: 0..<scalars.count, using: &random)
      let end = Int.random(in: start + 1...scalars.count, using: &random)
      queries.append([String(String.UnicodeScalarView(scalars[start..<end]))])
    }

    for (index, board) in boards.enumerated() {
      let principals: Set<String> = ["*", ids[index]]
      for terms in queries {
        func matches(_ object: DataObject, _ fields: [String]) -> Bool {
          terms.allSatisfy { term in
            fields.contains { TextSearch.contains(object[$0]?.stringValue ?? "", term) }
          }
        }
        var expected: Set<String> = []
        for thread in threads
        where !thread.acl.readers.isDisjoint(with: principals)
          && matches(thread, ["title", "description"])
        {
          expected.insert(String(thread["number"]?.intValue ?? 0))
        }
        for comment in comments
        where !comment.acl.readers.isDisjoint(with: principals) && matches(comment, ["text"]) {
          let thread = threadById[comment["thread"]?.pointerId ?? ""]
          expected.insert(
            "\(thread?["number"]?.intValue ?? 0)/\(comment["number"]?.intValue ?? 0)")
        }
        for message in messages
        where !message.acl.readers.isDisjoint(with: principals) && matches(message, ["text"]) {
          let conversation = conversationById[message["conversation"]?.pointerId ?? ""]
          let members = [conversation?["user"]?.pointerId, conversation?["partner"]?.pointerId]
          let other = members.compactMap { $0 }.first { $0 != ids[index] } ?? ""
          expected.insert("@\(userNames[other] ?? "?")/\(message["number"]?.intValue ?? 0)")
        }
        var found: [String] = []
        var page = 1
        while true {
          let results = try board.search(terms, page: page)
          found += results.items.map(\.ref)
          for hit in results.items {
            #expect(!hit.matchedFields.isEmpty, "\(engine) \(terms) \(hit.ref)")
          }
          guard results.hasMore else { break }
          page += 1
        }
        #expect(found.count == Set(found).count, "\(engine) \(people[index]) \(terms): twice")
        #expect(
          Set(found) == expected,
          "\(engine) \(people[index]) \(terms): missing \(expected.subtracting(found).sorted()), extra \(Set(found).subtracting(expected).sorted())"
        )
      }
    }
    // The thread filter and the author filter agree with the oracle too.
    let number = threadNumbers.first { (try? boards[2].thread($0)) != nil }!
    let inThread = try boards[2].search(["a"], thread: number).items.map(\.ref)
    #expect(inThread.allSatisfy { $0 == "\(number)" || $0.hasPrefix("\(number)/") })
    let byBob = try boards[2].search(["天"], author: boards[1].me.userName).items
    #expect(byBob.allSatisfy { $0.authorName == boards[1].me.displayName })
  }

  @Test(arguments: EngineFixtures.withRemote)
  func hostileTermsAreText(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    try alice.createThread(title: "plain", description: "", image: nil)
    for term in [
      "\"", "\"\"", "*", "-", ":", "NEAR(", "NEAR/2", "(", "'", "\\", "%", "_", "^", "AND", "OR",
      "NOT", "--", "/*", "'; DROP TABLE objects; --", String(repeating: "\"", count: 100),
    ] {
      let results = try alice.search([term])
      #expect(results.items.isEmpty, "\(engine) \(term)")
    }
    #expect(try alice.search(["plain"]).items.map(\.ref) == ["1"])
    #expect(throws: DatastoreError.self) { try alice.search([""]) }
    #expect(throws: DatastoreError.self) { try alice.search([]) }
    #expect(throws: DatastoreError.self) {
      try alice.search([String(repeating: "x", count: 1001)])
    }
    #expect(throws: DatastoreError.self) { try alice.search(["a\u{0}b"]) }
  }

  /// A thread whose readers are `readers` (the board only makes public ones).
  private func privateThread(
    _ board: Board, _ title: String, _ description: String, readers: Set<String>
  ) throws -> Int {
    let object = try board.client.create(
      Board.threadClass,
      fields: ["title": .string(title), "description": .string(description)],
      acl: ACL(readers: readers, writers: [board.me.objectId]))
    return Int(object["number"]?.intValue ?? 0)
  }
}

/// SplitMix64, so a failure can be replayed.
struct SeededRandom: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

@Suite("search on PostgreSQL")
struct PostgresSearchPlanTests {
  /// A member's search of a word of three or more characters takes its candidates from the
  /// class's trigram index (through the owner's function), not from a read of every row.
  @Test func aMembersSearchWalksTheTrigramIndex() throws {
    let world = try BoardWorld(PostgresFixture())
    let alice = try world.board("alice")
    for index in 0..<30 {
      try alice.createThread(title: "thread \(index) keyboard", description: "", image: nil)
    }
    let store = try Datastore.open(
      try world.database.location(as: "alice"), rules: Board.rules, indexes: Board.indexes)
    let engine = try #require(store.engine as? PostgresEngine)
    #expect(engine.indexedClasses == ["Thread", "Comment", "Message"] as Set)
    let (client, _) = try store.signIn(
      profile: "alice", in: ProfileStore(directory: world.root + "/profiles"))
    let search = TextSearch(
      terms: ["keyboard"], targets: [TextSearch.Target(className: "Thread")], limit: 100)
    let (sql, values) = try engine.searchStatement(search, as: client.principals)
    #expect(sql.contains("forum.search_candidates('Thread', "))
    // And the caller's own private threads by theirs (issue 22).
    #expect(sql.contains("forum.private_search_candidates('Thread', "))
    // The function's query, as its owner runs it, is served by the index.
    let owner = try #require(
      try Datastore.open(world.database.ownerLocation).engine as? PostgresEngine)
    _ = try owner.run("SET enable_seqscan = off")
    let plan = try owner.run(
      """
      EXPLAIN (COSTS OFF) SELECT s.id FROM forum.search_text s
      WHERE s.public AND s.class = 'Thread' AND s.body LIKE '%keyboard%'
      """)
    let text = plan.rows { plan.text($0, 0) ?? "" }.joined(separator: "\n")
    #expect(text.contains("search_text_public_body"), "\(text)")
    // Members cannot read the index table itself.
    #expect(throws: (any Error).self) { try engine.run("SELECT count(*) FROM forum.search_text") }
    #expect(try client.search(search).count == 30)
    // Each place binds its own copy (`SQL` binds what it interpolates): the pattern six times
    // (two fields in each branch, two candidate functions), the caller's names in each branch,
    // the private rows' class, the page's limit and offset.
    #expect(values.count == 11)
    #expect(values.filter { $0 == .text("%keyboard%") }.count == 6)
  }
}

@Suite("search on SQLite")
struct SQLiteSearchPlanTests {
  /// A word of one or two characters is looked up in the trigram index as the trigrams it begins
  /// (the indexed text ends in two newlines, so its last characters begin some), not by reading
  /// every post; one in no post is answered without reading any (issue 20).
  @Test func aShortWordIsLookedUpInTheTrigramIndex() throws {
    let world = try BoardWorld(SQLiteFixture())
    let alice = try world.board("alice")
    try alice.createThread(title: "ok", description: "", image: nil)
    try alice.createThread(title: "Keyboard", description: "天気", image: nil)
    try alice.addComment(to: 2, text: "é")
    let engine = try #require(alice.store.engine as? SQLiteEngine)
    let principals = Principals(userId: alice.me.objectId)
    let targets = [TextSearch.Target(className: "Thread"), TextSearch.Target(className: "Comment")]
    for (terms, expected) in [
      (["k"], ["1", "2"]), (["ok"], ["1"]), (["K"], ["1", "2"]), (["KE"], ["2"]), (["気"], ["2"]),
      (["天気"], ["2"]), (["é"], ["2/1"]), (["É"], []), (["zq"], []), (["ke", "yb"], ["2"]),
      (["ke", "zq"], []), (["o", "keyboard"], ["2"]),
    ] {
      let search = TextSearch(terms: terms, targets: targets, limit: 100)
      let (sql, values) = try engine.searchStatement(search, as: principals)
      let plan = try engine.connection.prepare("EXPLAIN QUERY PLAN " + sql).rows(values) {
        try $0.text(3) ?? ""
      }
      #expect(!plan.contains { $0.hasPrefix("SCAN o") }, "\(terms): \(plan)")
      let found = try alice.search(terms).items.map(\.ref)
      #expect(Set(found) == Set(expected), "\(terms): \(found)")
    }
    // A short word no indexed post holds reads only the rows queued for the index (issue 33:
    // `search_pending`, bounded), and no other row.
    let absent = try engine.searchStatement(
      TextSearch(terms: ["zq"], targets: targets), as: principals)
    #expect(!absent.sql.contains("search_text"), "\(absent.sql)")
    let plan = try engine.connection.prepare("EXPLAIN QUERY PLAN " + absent.sql).rows(
      absent.values
    ) { try $0.text(3) ?? "" }
    #expect(plan.first == "SCAN q", "\(plan)")
  }
}
