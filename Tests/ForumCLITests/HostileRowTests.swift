import Foundation
import Testing

@testable import Datastore

/// Rows written by hand with `sqlite3` (README, trust model: anyone with the file can). Whatever
/// one row holds, it never drives the terminal, and it breaks nothing but itself.
@Suite("rows written by hand with sqlite3")
struct HostileRowTests {
  static let jpeg = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/corpus/jpeg/testorig.jpg").path

  /// Runs `sql` on the fixture's database with the sqlite3 shell (a missing shell fails).
  static func sqlite(_ forum: ForumFixture, _ sql: String) throws {
    let result = try ForumFixture.launch(
      "/usr/bin/sqlite3", arguments: [forum.db, sql], environment: forum.environment(),
      input: Data(), timeout: 60)
    #expect(result.status == 0, "sqlite3: \(result.summary)")
  }

  /// A user's handle as `--json whoami` says it.
  static func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    try forum.ok(["--json", "whoami"], profile: profile).json().string("userName") ?? ""
  }

  /// What someone with the file runs before writing a row over the object limits: the limits
  /// are triggers, which sqlite3 may drop like any other.
  static let dropLimits =
    "DROP TRIGGER IF EXISTS objects_shape_insert; DROP TRIGGER IF EXISTS objects_shape_update; "

  /// An OSC 52 sequence: a terminal that obeys it sets its clipboard.
  static let clipboard = "char(27) || ']52;c;cHc=' || char(7)"

  /// Every text a row holds, the handle and the image's stored facts included, set to escapes:
  /// every command that shows the row shows them harmlessly. The search's `@handle/N` column
  /// wrote the handle raw; the image line wrote the removed metadata's names raw.
  @Test func aHandleAndEveryStoredTextSetByHandAreShownHarmlessly() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "zqx alpha", "--description", "zqx", "--image", Self.jpeg])
    try forum.ok(["comment", "1", "zqx from bob"], profile: "bob")
    try forum.ok(["reply", "1/1", "zqx reply"])
    let bob = try Self.handle(forum, "bob")
    try forum.ok(["dm", "@" + bob, "zqx secret"])
    let alice = try Self.handle(forum, "alice")
    try forum.ok(["dm", "@" + alice, "zqx answer"], profile: "bob")
    try forum.ok(["name", "Sam"])
    try forum.ok(["name", "Sam"], profile: "bob")
    try Self.sqlite(
      forum,
      """
      UPDATE objects SET data = json_set(data, '$.userName', \(Self.clipboard))
        WHERE class = 'user' AND json_extract(data, '$.userName') = '\(bob)';
      UPDATE objects SET data = json_set(data, '$.image.removedMetadata',
          json_array('Exif' || \(Self.clipboard)), '$.fileName', 'x' || \(Self.clipboard))
        WHERE class = 'Thread';
      """)
    let runs = [
      ["list"], ["show", "1"], ["search", "zqx"], ["search", "zqx", "--thread", "1"],
      ["inbox"], ["--json", "search", "zqx"], ["--json", "inbox"], ["--json", "show", "1"],
      ["image", "1"], ["whoami"],
    ].map { try? forum.run($0, environment: ["COLUMNS": "100"]) }
    let bobs = [["whoami"], ["inbox"], ["search", "zqx"]].map {
      try? forum.run($0, profile: "bob")
    }
    for case let result? in runs + bobs {
      expectHarmless(result)
    }
    let search = try #require(runs[2])
    #expect(search.status == 0, "\(search.summary)")
    // The handle is there, shown as symbols.
    #expect(search.stdout.contains("@␛]52;c;cHc"), "\(search.summary)")
    #expect(try #require(runs[8]).stdout.contains("(Exif␛]52;c;cHc=␇ removed)"))
  }
}

/// What a search's order can tell a third person (SQLite; PostgreSQL lists newest first).
@Suite("the order of a search")
struct SearchOrderPrivacyTests {
  /// The order of a search depends on what the searcher can read alone. bm25 weighed each word
  /// by how many posts of the whole board hold it, messages between others included: one
  /// message between Alice and Bob holding zqxbeta swapped Carol's two posts.
  @Test func theOrderOfASearchIsTheSameWhateverOthersMessagesHold() throws {
    let forum = try ForumFixture()
    try forum.ok(
      ["new", "--title", "first", "--description", "zqxalpha zqxalpha zqxbeta"], profile: "carol")
    try forum.ok(
      ["new", "--title", "second", "--description", "zqxalpha zqxbeta zqxbeta"], profile: "carol")
    func order() throws -> [String] {
      let result = try forum.ok(["--json", "search", "zqxalpha", "zqxbeta"], profile: "carol")
      return try result.json().objects("results").compactMap { $0.string("ref") }
    }
    let before = try order()
    #expect(before.count == 2)
    let bob = try HostileRowTests.handle(forum, "bob")
    for _ in 1...3 { try forum.ok(["dm", "@" + bob, "secret zqxbeta plans"]) }
    #expect(try order() == before, "a message Carol cannot read moved her posts")
    // And the other way: messages holding the other word.
    for _ in 1...3 { try forum.ok(["dm", "@" + bob, "zqxalpha zqxalpha"]) }
    #expect(try order() == before, "a message Carol cannot read moved her posts")
    // Bob can read the messages: they are found, and Carol's posts keep their order among them.
    let bobs = try forum.ok(["--json", "search", "zqxalpha", "zqxbeta"], profile: "bob")
    #expect(try bobs.json().objects("results").compactMap { $0.string("ref") } == before)
  }
}

/// One row written by hand breaks nothing but itself: every command that does not need that
/// row's own contents still works for everyone, and the row itself is shown or said plainly.
@Suite("one bad row")
struct OneBadRowTests {
  /// Each: what is written with sqlite3, and whether comment 1/1 keeps a readable text (a reply
  /// to it and its history still work then).
  static let rows: [(name: String, sql: String, commentReadable: Bool)] = [
    ("not UTF-8 in a display name", badBytes("user", "displayName", of: "bob"), true),
    ("not UTF-8 in a title", badBytes("Thread", "title", number: 1), true),
    ("not UTF-8 in a description", badBytes("Thread", "description", number: 2), true),
    ("not UTF-8 in a comment", badBytes("Comment", "text", number: 1), true),
    ("not UTF-8 in a message", badBytes("Message", "text", number: 1), true),
    (
      "not UTF-8 in an object id",
      "UPDATE objects SET objectId = CAST(X'41FF42' AS TEXT) WHERE class = 'Comment' AND "
        + "json_extract(data, '$.text') = 'another hi'", true
    ),
    (
      "not UTF-8 in the readers",
      "UPDATE objects SET readers = readers || CAST(X'FF' AS TEXT) WHERE class = 'Thread'", true
    ),
    ("commentCount -5", set("Thread", "commentCount", "-5"), true),
    ("lastCommentNumber -5", set("Thread", "lastCommentNumber", "-5"), true),
    ("commentCount huge", set("Thread", "commentCount", "9223372036854775807"), true),
    ("lastActivity near the smallest", set("Thread", "lastActivity", "-9223372036854775807"), true),
    ("lastActivity near the largest", set("Thread", "lastActivity", "9223372036854775807"), true),
    ("messageCount -5", set("Conversation", "messageCount", "-5"), true),
    ("messageCount huge", set("Conversation", "messageCount", "9223372036854775807"), true),
    (
      "a conversation pointing at no one",
      set("Conversation", "partner.objectId", "'nosuchuser00000'"), true
    ),
    ("a title that is a number", set("Thread", "title", "5"), true),
    ("a comment's data that is not an object", data("Comment", "'5'", number: 1), false),
    ("a thread's data that is not an object", data("Thread", "'[]'", number: 2), true),
    (
      "a thread's counters that are not an object",
      "UPDATE objects SET counts = '[5]' WHERE class = 'Thread'", true
    ),
    (
      "JSON nested 600 deep in a thread",
      HostileRowTests.dropLimits
        + set("Thread", "deep", "json(printf('%.*c', 600, '[') || printf('%.*c', 600, ']'))"), true
    ),
    (
      "JSON nested 600 deep in a comment",
      HostileRowTests.dropLimits
        + set("Comment", "deep", "json(printf('%.*c', 600, '[') || printf('%.*c', 600, ']'))"), true
    ),
    ("a revision that is not JSON", "UPDATE revisions SET data = '{\"text\":'", true),
    (
      "a revision not UTF-8",
      "UPDATE revisions SET data = CAST(X'7B2274657874223A2268FF227D' AS TEXT)", true
    ),
    (
      "a change at the largest number",
      "INSERT INTO changes(seq, class, objectId, kind, readers) "
        + "VALUES (9223372036854775807, 'Thread', 'x', 0, ' * ')", true
    ),
  ]

  static func badBytes(_ className: String, _ field: String, number: Int) -> String {
    "UPDATE objects SET data = json_set(data, '$.\(field)', CAST(X'426FFF62' AS TEXT)) "
      + "WHERE class = '\(className)' AND json_extract(data, '$.number') = \(number)"
  }

  static func badBytes(_ className: String, _ field: String, of profile: String) -> String {
    "UPDATE objects SET data = json_set(data, '$.\(field)', CAST(X'426FFF62' AS TEXT)) "
      + "WHERE class = 'user' AND json_extract(data, '$.displayName') = '\(profile)'"
  }

  /// Sets `field` on every row of the class (`value` is SQL), where the board keeps it: a
  /// thread's or a conversation's counters in their own column (`SQLiteRules.counterColumn`).
  static func set(_ className: String, _ field: String, _ value: String) -> String {
    let counters = [
      "commentCount", "lastCommentNumber", "lastActivity", "messageCount", "lastMessageNumber",
    ]
    let column = counters.contains(field) ? "counts" : "data"
    return "UPDATE objects SET \(column) = json_set(\(column), '$.\(field)', \(value)) "
      + "WHERE class = '\(className)'"
  }

  static func data(_ className: String, _ value: String, number: Int) -> String {
    "UPDATE objects SET data = \(value) WHERE class = '\(className)' AND "
      + "json_extract(data, '$.number') = \(number)"
  }

  @Test(arguments: rows.indices)
  func everythingElseWorks(_ index: Int) throws {
    let row = Self.rows[index]
    let forum = try ForumFixture()
    for profile in ["alice", "bob", "carol"] { try forum.ok(["name", profile], profile: profile) }
    try forum.ok(["new", "--title", "alice thread", "--description", "hello world"])
    try forum.ok(["comment", "1", "bob says hi"], profile: "bob")
    try forum.ok(["reply", "1/1", "carol answers"], profile: "carol")
    try forum.ok(["new", "--title", "bob thread", "--description", "second hi"], profile: "bob")
    try forum.ok(["comment", "2", "another hi"], profile: "bob")
    try forum.ok(["edit", "1/1", "bob says hi again"], profile: "bob")
    let bob = "@" + (try HostileRowTests.handle(forum, "bob"))
    try forum.ok(["dm", bob, "secret hi"])
    try HostileRowTests.sqlite(forum, row.sql)

    var runs: [(String, [String])] = [
      ("carol", ["list"]), ("carol", ["list", "--unread"]), ("carol", ["--json", "list"]),
      ("alice", ["list"]), ("carol", ["show", "1"]), ("carol", ["show", "1", "--page", "last"]),
      ("carol", ["--json", "show", "1"]), ("alice", ["search", "hi"]),
      ("carol", ["--json", "search", "hi"]), ("alice", ["inbox"]), ("bob", ["--json", "inbox"]),
      ("alice", ["dm", bob]), ("alice", ["dm", bob, "again"]), ("carol", ["comment", "1", "x"]),
      ("carol", ["new", "--title", "fresh"]), ("carol", ["whoami"]), ("carol", ["read", "--all"]),
    ]
    if !row.sql.contains("'Thread' AND json_extract(data, '$.number') = 2") {
      runs += [("carol", ["show", "2"]), ("carol", ["comment", "2", "y"])]
    }
    if row.commentReadable {
      runs += [("carol", ["reply", "1/1", "z"]), ("carol", ["history", "1/1"])]
    }
    for (profile, arguments) in runs {
      let result = try forum.run(arguments, profile: profile)
      #expect(result.status == 0, "\(row.name): \(result.summary)")
      expectHarmless(result)
    }
    let unread = try forum.script(["unread", "unread", "unread", "unread"], profile: "bob")
    #expect(unread.status == 0, "\(row.name): \(unread.summary)")
  }
}

/// A row the board cannot read (issue 22 item 6) is one line with its number wherever it would
/// be shown, in both languages and in `--json`, and everything around it works.
@Suite("a row the board cannot read")
struct DamagedRowTests {
  static let damaged = "(damaged: cannot be read)"
  static let deep = "json(printf('%.*c', 600, '[') || printf('%.*c', 600, ']'))"

  /// Alice's thread #1 with Bob's comment 1/1 and Carol's reply to it, Bob's thread #2 with a
  /// comment, a thread #3, and Alice's message to Bob; then #2, 1/1 and the message nested too
  /// deep to read, and #3 no JSON object at all (its number is lost with it).
  static func board() throws -> (ForumFixture, bob: String) {
    let forum = try ForumFixture()
    for profile in ["alice", "bob", "carol"] { try forum.ok(["name", profile], profile: profile) }
    try forum.ok(["new", "--title", "alice thread", "--description", "hello world"])
    try forum.ok(["comment", "1", "bob says hi"], profile: "bob")
    try forum.ok(["reply", "1/1", "carol answers"], profile: "carol")
    try forum.ok(["new", "--title", "bob thread", "--description", "second hi"], profile: "bob")
    try forum.ok(["comment", "2", "another hi"], profile: "bob")
    try forum.ok(["new", "--title", "third hi"], profile: "bob")
    let bob = "@" + (try HostileRowTests.handle(forum, "bob"))
    try forum.ok(["dm", bob, "secret hi"])
    try HostileRowTests.sqlite(
      forum,
      HostileRowTests.dropLimits
        + """
        UPDATE objects SET data = json_set(data, '$.deep', \(deep))
          WHERE (class = 'Thread' AND json_extract(data, '$.number') = 2)
            OR (class = 'Comment' AND json_extract(data, '$.text') = 'bob says hi')
            OR class = 'Message';
        UPDATE objects SET data = '[]'
          WHERE class = 'Thread' AND json_extract(data, '$.number') = 3;
        """)
    return (forum, bob)
  }

  @Test func isOneLineWithItsNumberInEveryListing() throws {
    let (forum, bob) = try Self.board()
    func lines(_ result: RunResult) -> [String] {
      #expect(result.status == 0, "\(result.summary)")
      expectHarmless(result)
      return result.stdoutLines
    }
    func line(_ lines: [String], startingWith prefix: String) -> String? {
      lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }
    }
    let list = lines(try forum.run(["list"], profile: "carol"))
    #expect(line(list, startingWith: "#2")?.hasSuffix(Self.damaged) == true, "\(list)")
    #expect(line(list, startingWith: "#?")?.hasSuffix(Self.damaged) == true, "\(list)")
    #expect(line(list, startingWith: "#1")?.contains("alice thread") == true, "\(list)")
    #expect(!list.contains { $0.contains("#0") || $0.contains("deleted user") }, "\(list)")

    let second = lines(try forum.run(["show", "2"], profile: "carol"))
    #expect(second.first == "#2 " + Self.damaged, "\(second)")
    #expect(second.contains { $0.contains("another hi") }, "its comments are still shown")

    let first = lines(try forum.run(["show", "1"], profile: "carol"))
    #expect(first.contains("  1 " + Self.damaged), "\(first)")
    #expect(first.contains { $0.contains("> 1 " + Self.damaged) }, "the reply's quote: \(first)")
    #expect(first.contains { $0.contains("carol answers") }, "\(first)")
    #expect(!first.contains { $0.contains("bob says hi") }, "\(first)")

    let search = lines(try forum.run(["search", "hi"]))
    #expect(line(search, startingWith: "#2")?.hasSuffix(Self.damaged) == true, "\(search)")
    #expect(line(search, startingWith: "1/1")?.hasSuffix(Self.damaged) == true, "\(search)")
    #expect(line(search, startingWith: "@")?.hasSuffix(Self.damaged) == true, "\(search)")
    #expect(search.contains { $0.contains("another hi") }, "\(search)")

    let inbox = lines(try forum.run(["inbox"]))
    #expect(inbox.count == 1 && inbox[0].contains(Self.damaged), "\(inbox)")
    let conversation = lines(try forum.run(["dm", bob]))
    #expect(conversation.contains("  1 " + Self.damaged), "\(conversation)")
    // The board still takes new posts beside them.
    try forum.ok(["comment", "2", "still works"], profile: "carol")
    try forum.ok(["dm", bob, "still here"])
  }

  @Test func isSaidInJapaneseAndMarkedInJSON() throws {
    let (forum, _) = try Self.board()
    let japanese = try forum.run(["list"], profile: "carol", lang: JapaneseTests.ja)
    #expect(japanese.status == 0, "\(japanese.summary)")
    #expect(
      japanese.stdoutLines.contains { $0.hasPrefix("#2") && $0.hasSuffix("(破損: 読み取れません)") },
      "\(japanese.summary)")

    let list = try forum.ok(["--json", "list"], profile: "carol").json().objects("results")
    let second = try #require(list.first { ($0["number"] as? Int) == 2 }, "\(list)")
    #expect(second["damaged"] as? Bool == true)
    #expect(second["title"] == nil && second["deep"] == nil, "nothing else of it: \(second)")
    #expect(list.first { ($0["number"] as? Int) == 1 }?["damaged"] == nil)
    #expect(list.filter { $0["damaged"] as? Bool == true }.count == 2, "#2 and the lost #3")

    let show = try forum.ok(["--json", "show", "1"], profile: "carol").json()
    let comments = show.objects("results")
    #expect(comments.first { ($0["number"] as? Int) == 1 }?["damaged"] as? Bool == true)
    #expect(comments.first { ($0["number"] as? Int) == 2 }?["text"] as? String == "carol answers")

    let search = try forum.ok(["--json", "search", "hi"]).json().objects("results")
    #expect(search.first { $0.string("ref") == "1/1" }?["damaged"] as? Bool == true, "\(search)")
    let inbox = try forum.ok(["--json", "inbox"]).json().objects("results")
    let last = try #require(inbox.first?["lastMessage"] as? [String: Any], "\(inbox)")
    #expect(last["damaged"] as? Bool == true && last["text"] == nil, "\(last)")
  }
}

/// The object limits are the file's own (triggers, as PostgreSQL's check): an app through
/// `forum serve` and a program writing rows with SQL are refused like the board's own writes.
@Suite("the object limits on SQLite")
struct SQLiteObjectLimitTests {
  @Test func theTriggersRefuseAnObjectTooLargeOrTooDeep() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    let writes = [
      "UPDATE objects SET data = json_set(data, '$.big', printf('%.*c', 2000000, 'x')) "
        + "WHERE class = 'Thread'",
      "UPDATE objects SET data = json_set(data, '$.deep', "
        + "json(printf('%.*c', 101, '[') || printf('%.*c', 101, ']'))) WHERE class = 'Thread'",
      "INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data) "
        + "SELECT 'Note', 'AAAAAAAAAAAAAAAB', 0, 0, ' * ', ' ', "
        + "'{\"deep\":' || printf('%.*c', 3000, '[') || printf('%.*c', 3000, ']') || '}'",
    ]
    func rows() throws -> String {
      try ForumFixture.launch(
        "/usr/bin/sqlite3", arguments: [forum.db, "SELECT * FROM objects ORDER BY id"],
        environment: forum.environment(), input: Data(), timeout: 60
      ).stdout
    }
    let before = try rows()
    for sql in writes {
      let result = try ForumFixture.launch(
        "/usr/bin/sqlite3", arguments: [forum.db, sql], environment: forum.environment(),
        input: Data(), timeout: 60)
      #expect(result.status != 0 && result.stderr.contains("E400002"), "\(sql): \(result.summary)")
    }
    #expect(try rows() == before, "a refused write changed a row")
    // Within the limits, sqlite3 still writes; the board reads on.
    try HostileRowTests.sqlite(
      forum,
      "UPDATE objects SET data = json_set(data, '$.deep', "
        + "json(printf('%.*c', 100, '[') || printf('%.*c', 100, ']'))) WHERE class = 'Thread'")
    #expect(try rows() != before)
    try forum.ok(["show", "1"])
  }
}
