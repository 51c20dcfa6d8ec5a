import Foundation
import Testing

/// `delete`: your own posts go, with their comments; others' stay, and scripts must say --yes.
@Suite("delete")
struct DeleteTests {
  /// Alice's thread #1 with comments by alice (1/1, 1/3) and bob (1/2), and bob's thread #2.
  private func seeded() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "alice's", "--description", "mine"])
    try forum.ok(["comment", "1", "alice comments"])
    try forum.ok(["comment", "1", "bob comments"], profile: "bob")
    try forum.ok(["comment", "1", "alice again"])
    try forum.ok(["new", "--title", "bob's"], profile: "bob")
    try forum.ok(["comment", "2", "on bob's"])
    return forum
  }

  @Test func deletingYourThreadTakesItsCommentsWithIt() throws {
    let forum = try seeded()
    let result = try forum.ok(["delete", "1", "--yes"])
    #expect(result.stdout == "Deleted #1.\n")
    #expect(result.stderr.isEmpty)

    let shown = try forum.run(["--json", "show", "1"])
    #expect(shown.status == 4)
    #expect(shown.stdout.isEmpty)
    let error = try shown.jsonError()
    #expect(error.string("code") == "E404001")
    #expect(error.string("error") == "No data available.")
    #expect(
      shown.stderr
        == "{\"code\":\"E404001\",\"detail\":\"there is no thread #1\",\"error\":\"No data available.\"}\n"
    )

    #expect(try forum.storedThreads().map { $0["number"] } == [.int(2)])
    let comments = try forum.storedComments()
    #expect(comments.map { $0["text"] } == [.string("on bob's")])

    // Numbers are never handed out again.
    try forum.ok(["new", "--title", "after"])
    #expect(try forum.storedThreads().map { $0["number"] } == [.int(2), .int(3)])
  }

  @Test func deletingYourCommentKeepsTheOthersNumbers() throws {
    let forum = try seeded()
    let result = try forum.ok(["delete", "1/1", "--yes"])
    #expect(result.stdout == "Deleted 1/1.\n")
    #expect(try forum.storedComments(ofThread: 1).map { $0["number"] } == [.int(2), .int(3)])
    let json = try forum.ok(["--json", "show", "1"]).json()
    #expect(json.int("count") == 2)
    #expect(json.object("thread")?.int("commentCount") == 2)
    #expect(numbers(json.objects("results")) == [2, 3])

    let again = try forum.run(["delete", "1/1", "--yes"])
    #expect(again.status == 4)
    #expect(again.stderr == "forum: there is no comment 1/1\n")

    // The next comment gets a new number, never 1 again.
    try forum.ok(["comment", "1", "later"])
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["number"] } == [.int(2), .int(3), .int(4)])
  }

  @Test func deletingSomeoneElsesThreadIsRefusedAndChangesNothing() throws {
    let forum = try seeded()
    let threadsBefore = try forum.storedThreads()
    let commentsBefore = try forum.storedComments()

    let result = try forum.run(["delete", "1", "--yes"], profile: "bob")
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    // The refusal says who may (issue #12).
    #expect(result.stderr.hasPrefix("forum: only "))
    #expect(result.stderr.hasSuffix(" (the author) and moderators may delete #1\n"))

    let comment = try forum.run(["delete", "1/1", "--yes"], profile: "bob")
    #expect(comment.status == 3)
    #expect(comment.stderr.hasSuffix(" (the author) and moderators may delete 1/1\n"))

    let json = try forum.run(["--json", "delete", "1/3", "--yes"], profile: "bob")
    #expect(json.status == 3)
    #expect(json.stderr.hasPrefix("{\"code\":\"E403001\",\"detail\":\"only "))
    #expect(
      json.stderr.hasSuffix(
        " (the author) and moderators may delete 1/3\",\"error\":\"No access with ACL.\"}\n"))

    #expect(try forum.storedThreads() == threadsBefore)
    #expect(try forum.storedComments() == commentsBefore)
    let shown = try forum.ok(["--json", "show", "1"]).json()
    #expect(shown.int("count") == 3)
    #expect(shown.object("thread")?.int("commentCount") == 3)
  }

  @Test func aCommenterMayDeleteTheirCommentOnSomeoneElsesThread() throws {
    let forum = try seeded()
    try forum.ok(["delete", "1/2", "--yes"], profile: "bob")
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] }
        == [.string("alice comments"), .string("alice again")])
    let thread = try #require(try forum.storedThreads().first)
    #expect(thread["commentCount"] == .int(2))
  }

  @Test func deleteFromAPipeNeedsYes() throws {
    let forum = try seeded()
    let before = try forum.storedComments()

    let oneShot = try forum.run(["delete", "1"], input: Data("y\n".utf8))
    #expect(oneShot.status == 2)
    #expect(oneShot.stderr == "forum: delete asks for confirmation; from a script add --yes\n")

    let script = try forum.script(["delete 1/1", "delete 1", "show 1", "delete 3"])
    #expect(script.status == 2, "\(script.summary)")
    #expect(
      script.stderrLines == [
        "forum: line 1: delete asks for confirmation; from a script add --yes",
        "forum: line 2: delete asks for confirmation; from a script add --yes",
        "forum: line 4: delete asks for confirmation; from a script add --yes",
      ])
    #expect(try forum.storedThreads().count == 2)
    #expect(try forum.storedComments() == before)

    // With --yes the same script goes through; a script has no current thread, so a comment
    // is named in full.
    let confirmed = try forum.script(
      ["show 1", "delete 1/3 --yes", "delete #2 -y"], profile: "alice")
    #expect(confirmed.status == 3, "\(confirmed.summary)")  // #2 is bob's
    #expect(confirmed.stdoutLines.contains("Deleted 1/3."))
    #expect(confirmed.stderrLines.count == 1)
    #expect(
      confirmed.stderr.hasPrefix("forum: line 3: only ")
        && confirmed.stderr.hasSuffix(" (the author) and moderators may delete #2\n"))
    #expect(try forum.storedComments(ofThread: 1).count == 2)
  }

  @Test func deleteOfWhatDoesNotExist() throws {
    let forum = try ForumFixture()
    let thread = try forum.run(["delete", "9", "--yes"])
    #expect(thread.status == 4)
    #expect(thread.stderr == "forum: there is no thread #9\n")
    let bad = try forum.run(["delete", "x/y", "--yes"])
    #expect(bad.status == 2)
    let none = try forum.run(["delete"])
    #expect(none.status == 2)
    #expect(none.stderr == "forum: usage: delete THREAD | THREAD/COMMENT [--yes]\n")
  }
}
