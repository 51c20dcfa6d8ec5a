import Foundation
import Testing

/// The board's limits, seen from the command line: refused cleanly, nothing stored.
@Suite("limits")
struct LimitsTests {
  @Test func titleOfTwoHundredCharactersIsTheLimit() throws {
    let forum = try ForumFixture()
    let accepted = try forum.run(["new", "--title", String(repeating: "a", count: 200)])
    #expect(accepted.status == 0, "\(accepted.summary)")
    // Characters, not bytes: 200 Japanese characters are 600 bytes and still fit.
    let japanese = try forum.run(["new", "--title", String(repeating: "あ", count: 200)])
    #expect(japanese.status == 0, "\(japanese.summary)")

    let refused = try forum.run(["new", "--title", String(repeating: "a", count: 201)])
    #expect(refused.status == 1)
    #expect(refused.stdout.isEmpty)
    #expect(refused.stderr == "forum: The title is 201 characters; the limit is 200\n")
    #expect(try forum.storedThreads().count == 2)
  }

  @Test(arguments: ["", "   ", "\t \t", "\u{3000}"])
  func blankTitleIsEmpty(title: String) throws {
    let forum = try ForumFixture()
    let result = try forum.run(["new", "--title", title])
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderr == "forum: The title is empty.\n")
    #expect(try forum.storedThreads().isEmpty)
  }

  @Test func blankTitleInAScriptIsRefusedBeforeAskingForMore() throws {
    let forum = try ForumFixture()
    // The title line is blank: refused, reported at its own line; the description that follows
    // is skipped up to its `.`, and the lines after it run as commands.
    let result = try forum.script(["new", "   ", "delete 1 --yes", ".", "list"])
    #expect(result.status == 1)
    #expect(result.stderr == "forum: line 2: The title is empty.\n")
    #expect(result.stdout.hasPrefix("The board is empty."))
  }

  @Test func titleMayNotHoldALineBreak() throws {
    let forum = try ForumFixture()
    let result = try forum.run(["new", "--title", "two\nlines"])
    #expect(result.status == 1)
    #expect(result.stderr == "forum: The title must not contain a line break\n")
    #expect(try forum.storedThreads().isEmpty)
  }

  @Test func commentOfTenThousandCharactersIsTheLimit() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let accepted = try forum.run(["comment", "1", String(repeating: "c", count: 10_000)])
    #expect(accepted.status == 0, "\(accepted.summary)")
    let refused = try forum.run(["comment", "1", String(repeating: "c", count: 10_001)])
    #expect(refused.status == 1)
    #expect(refused.stderr == "forum: The comment is 10001 characters; the limit is 10000\n")

    // The same through the REPL's line-by-line draft.
    let lines = Array(repeating: String(repeating: "d", count: 99), count: 101)  // 101×100-1
    let drafted = try forum.script(["comment 1"] + lines + [".", "list"])
    #expect(drafted.status == 1)
    // Reported at the line of the command the draft belongs to.
    #expect(
      drafted.stderr == "forum: line 1: The comment is 10099 characters; the limit is 10000\n")
    #expect(drafted.stdoutLines.count == 1)  // `list` still ran
    #expect(try forum.storedComments().count == 1)
    #expect(try forum.storedThreads().first?["commentCount"] == .int(1))
  }

  @Test func descriptionOfMoreThanTenThousandCharactersIsRefused() throws {
    let forum = try ForumFixture()
    let refused = try forum.run([
      "new", "--title", "t", "--description", String(repeating: "d", count: 10_001),
    ])
    #expect(refused.status == 1)
    #expect(refused.stderr == "forum: The description is 10001 characters; the limit is 10000\n")
    #expect(try forum.storedThreads().isEmpty)
  }
}
