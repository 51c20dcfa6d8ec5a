import Foundation
import Testing

/// A board made by an earlier forum opens with this one: nothing to run first, nothing lost, and
/// its rules are reinstalled only when this forum renders them otherwise (a new format).
@Suite("boards made by an earlier forum")
struct OldBoardTests {
  /// Made by main at 05fff26 (`Fixtures/boards/main-05fff26`): alice's thread #1 with bob's
  /// comment and her edited one, bob's #2 taken down by a moderator, alice's message to bob.
  static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/boards/main-05fff26").path

  private func copied() throws -> ForumFixture {
    let forum = try ForumFixture()
    try FileManager.default.copyItem(atPath: Self.fixture + "/board.db", toPath: forum.db)
    try FileManager.default.createDirectory(
      atPath: forum.configHome + "/forum", withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: Self.fixture + "/profiles", toPath: forum.profilesDirectory)
    // A clone checks files out readable by all; forum takes only a profile its owner alone reads.
    for name in try FileManager.default.contentsOfDirectory(atPath: forum.profilesDirectory) {
      try FileManager.default.setAttributes(
        [.posixPermissions: 0o600], ofItemAtPath: forum.profilesDirectory + "/" + name)
    }
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o700], ofItemAtPath: forum.profilesDirectory)
    return forum
  }

  private func sqlite(_ path: String, _ sql: String) throws -> String {
    let result = try ForumFixture.launch(
      "/usr/bin/sqlite3", arguments: [path, sql], environment: [:], input: Data(), timeout: 60)
    #expect(result.status == 0, "\(result.summary)")
    return result.stdout
  }

  @Test func aBoardOfTheMainBeforeOpensAsItWas() throws {
    let forum = try copied()
    let rulesBefore = try sqlite(forum.db, "SELECT value FROM meta WHERE key = 'rules'")
    let triggersBefore = try sqlite(
      forum.db, "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name")

    let list = try forum.ok(["list"], profile: "alice").stdout
    #expect(list.contains("Keyboards"))
    #expect(list.contains("(deleted by a moderator"))
    let thread = try forum.ok(["--json", "show", "1"], profile: "bob").json()
    #expect(thread.objects("results").map { $0.string("text") } == ["a loud one", "thanks a lot"])
    let history = try forum.ok(["history", "1/2"], profile: "alice").stdout
    #expect(history.contains("thanks") && history.contains("thanks a lot"))
    let inbox = try forum.ok(["--json", "inbox"], profile: "bob").json()
    #expect(inbox.objects("results").count == 1)
    // Its search index was made again for short words (issue 20): the last two characters of a
    // post, which began no trigram before, are found.
    func refs(_ terms: [String]) throws -> Set<String> {
      Set(
        try forum.ok(["--json", "search"] + terms, profile: "alice").json().objects("results")
          .compactMap { $0.string("ref") })
    }
    #expect(try refs(["ne"]) == ["1", "1/1"])
    #expect(try refs(["ot"]) == ["1/2"])
    #expect(try refs(["t"]) == ["1/2"])
    #expect(try refs(["zq"]) == [])
    #expect(try refs(["keyboard", "s"]) == ["1"])

    // The same rules, recorded the same way after the format number, plus the pin (issue 20:
    // a `FlagRule`, which the board had no field of). The format moved once (8, issue 20: the
    // engine's INSERT writes a new row whole, so the triggers changed) and the triggers with
    // it, 9 with the lock (issue 31: a locked thread refuses new comments), 10 with a parent's
    // counters in their own column (issue 33); opened again, nothing is reinstalled.
    let rulesAfter = try sqlite(forum.db, "SELECT value FROM meta WHERE key = 'rules'")
    #expect(rulesBefore.hasPrefix("7 ") && rulesAfter.hasPrefix("11 "), "\(rulesAfter.prefix(20))")
    let pins =
      #""flags":[{"className":"Thread","field":"pinnedDate","role":"moderator"},"#
      + #"{"className":"Thread","field":"lockedDate","locksChildren":true,"role":"moderator"}],"#
    #expect(rulesAfter.contains(pins))
    // And the stewards (issue 32: bans and the posting budget, a `StewardRule`).
    let stewards =
      #","stewards":[{"bannedRole":"banned","role":"moderator","settings":["postsPerMinute"]}]"#
    #expect(rulesAfter.contains(stewards))
    #expect(
      rulesAfter.dropFirst(3).replacing(pins, with: "").replacing(stewards, with: "")
        == rulesBefore.dropFirst(2))
    let triggersAfter = try sqlite(
      forum.db, "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name")
    #expect(triggersAfter != triggersBefore)
    _ = try forum.ok(["list"], profile: "bob")
    #expect(try sqlite(forum.db, "SELECT value FROM meta WHERE key = 'rules'") == rulesAfter)
    #expect(
      try sqlite(
        forum.db, "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name")
        == triggersAfter)

    // And it takes new posts, numbered after the old ones.
    #expect(try forum.ok(["new", "--title", "Third"], profile: "bob").stdout == "Posted #3.\n")
    #expect(try forum.ok(["comment", "1", "again"], profile: "bob").stdout == "Posted 1/3.\n")
  }
}
