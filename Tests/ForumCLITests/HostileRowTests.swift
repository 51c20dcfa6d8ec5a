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
