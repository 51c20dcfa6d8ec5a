import Foundation
import Testing

/// `list` and `show` against the built binary: order, paging, comments oldest first.
@Suite("list and show")
struct ListAndShowTests {
  @Test func emptyBoardSaysHowToStart() throws {
    let forum = try ForumFixture()
    let result = try forum.ok(["list"])
    #expect(
      result.stdout
        == "The board is empty. Post the first thread with: new --title \"Hello\"\n")
    #expect(result.stderr.isEmpty)
    let json = try forum.ok(["--json", "list"])
    #expect(json.stdout == "{\"hasMore\":false,\"page\":1,\"results\":[]}\n")
  }

  @Test func listOrderFollowsLatestActivityAndACommentBumpsAThread() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first", "--description", "one"])
    try forum.ok(["new", "--title", "second"], profile: "bob")
    try forum.ok(["new", "--title", "third"])
    var list = try forum.ok(["--json", "list"]).json()
    #expect(numbers(list.objects("results")) == [3, 2, 1])

    try forum.ok(["comment", "1", "bump"], profile: "bob")
    list = try forum.ok(["--json", "list"]).json()
    #expect(numbers(list.objects("results")) == [1, 3, 2])
    let first = list.objects("results")[0]
    #expect(first.int("commentCount") == 1)

    let text = try forum.ok(["list"]).stdoutLines
    #expect(text.count == 3)
    #expect(text[0].hasPrefix("#1 ●  first — one"))
    #expect(text[1].hasPrefix("#3 ●  third"))
    #expect(text[2].hasPrefix("#2    second"))
    // The comment count column.
    #expect(text[0].hasSuffix("   1  now"))
    #expect(text[1].hasSuffix("   0  now"))
  }

  @Test func twentyOneThreadsMakeASecondPage() throws {
    let forum = try ForumFixture()
    let script = (1...21).map { "new --title \"thread \($0)\" --description \"d\($0)\"" }
    let created = try forum.script(script)
    #expect(created.status == 0, "\(created.summary)")
    #expect(created.stdoutLines == (1...21).map { "Posted #\($0)." })

    let page1 = try forum.ok(["list"]).stdoutLines
    #expect(page1.count == 21)
    #expect(page1.first?.hasPrefix("#21 ●  thread 21 — d21") == true)
    #expect(page1[19].hasPrefix(" #2 ●  thread 2 — d2"))
    #expect(page1.last == "page 1/2 — more: list --page 2")

    let page2 = try forum.ok(["list", "--page", "2"]).stdoutLines
    #expect(page2.count == 2)
    #expect(page2.first?.hasPrefix("#1 ●  thread 1 — d1") == true)
    #expect(page2.last == "page 2/2")
    #expect(try forum.ok(["list", "--page", "last"]).stdoutLines == page2)

    // JSON pages carry the paging fields (DESIGN §4): the page, whether more follow, and the
    // count once it is known (past page 1).
    let jsonPage1 = try forum.ok(["--json", "list"]).json()
    #expect(numbers(jsonPage1.objects("results")) == Array((2...21).reversed()))
    #expect(jsonPage1.int("page") == 1)
    #expect(jsonPage1["hasMore"] as? Bool == true)
    let jsonPage2 = try forum.ok(["--json", "list", "--page", "2"]).json()
    #expect(numbers(jsonPage2.objects("results")) == [1])
    #expect(jsonPage2.int("page") == 2)
    #expect(jsonPage2["hasMore"] as? Bool == false)
    #expect(jsonPage2.int("count") == 21)

    let json1 = try forum.ok(["--json", "list"]).json()
    #expect(numbers(json1.objects("results")) == Array((2...21).reversed()))
    let json2 = try forum.ok(["--json", "list", "--page=2"]).json()
    #expect(numbers(json2.objects("results")) == [1])
    let json3 = try forum.run(["--json", "list", "--page", "3"])
    #expect(json3.status == 4, "a page past the end is not found")
    #expect(try json3.jsonError().string("code") == "E404001")

    let bad = try forum.run(["list", "--page", "0"])
    #expect(bad.status == 2, "\(bad.summary)")
    #expect(bad.stderr == "forum: page must be a number like 12, not '0'\n")
  }

  @Test func showListsCommentsOldestFirstTwentyAPage() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "busy", "--description", "line one"])
    var script: [String] = []
    for number in 1...25 { script.append("comment 1 comment number \(number)") }
    let posted = try forum.script(script, profile: "bob")
    #expect(posted.status == 0, "\(posted.summary)")
    #expect(posted.stdoutLines.last == "Posted 1/25.")

    let page1 = try forum.ok(["show", "1"])
    let lines = page1.stdoutLines
    #expect(lines.first == "#1 busy")
    #expect(
      lines.contains { $0.hasPrefix("by ") && $0.contains("(you)") && $0.contains("25 comments") })
    #expect(lines.contains("line one"))
    // Two-digit comment numbers: the text is indented past them.
    let bodies = lines.filter { $0.hasPrefix("     comment number ") }
    #expect(bodies == (1...20).map { "     comment number \($0)" })
    #expect(lines.contains { $0.hasPrefix("   1 ") && $0.contains(" · now") })
    #expect(lines.contains { $0.hasPrefix("  20 ") })
    #expect(lines.last == "page 1/2 — more: show 1 --page 2")

    let page2 = try forum.ok(["show", "1", "--page", "2"]).stdoutLines
    #expect(
      page2.filter { $0.hasPrefix("     comment number ") }
        == (21...25).map { "     comment number \($0)" })
    #expect(page2.last == "page 2/2")
    #expect(page2.first == "#1 busy")

    let last = try forum.ok(["show", "1", "--page", "last"]).stdoutLines
    #expect(last == page2)

    let json = try forum.ok(["--json", "show", "1", "--page", "last"]).json()
    #expect(json.int("count") == 25)
    #expect(numbers(json.objects("results")) == Array(21...25))
    #expect(json.object("thread")?.int("number") == 1)
    #expect(json.object("thread")?.string("title") == "busy")
    #expect(json.int("page") == 2)
    #expect(json["hasMore"] as? Bool == false)
    let jsonFirst = try forum.ok(["--json", "show", "#1"]).json()
    #expect(numbers(jsonFirst.objects("results")) == Array(1...20))
    #expect(jsonFirst.objects("results").first?.string("text") == "comment number 1")
    #expect(jsonFirst.int("page") == 1)
    #expect(jsonFirst["hasMore"] as? Bool == true)
  }

  @Test func showOfAThreadWithoutCommentsAndOfAMissingThread() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "quiet"], profile: "bob")
    let shown = try forum.ok(["show", "1"]).stdoutLines
    #expect(shown.first == "#1 quiet")
    #expect(shown.contains("No comments yet."))
    #expect(!shown.contains { $0.contains("(you)") })  // alice looks at bob's thread

    let missing = try forum.run(["show", "2"])
    #expect(missing.status == 4)
    #expect(missing.stdout.isEmpty)
    #expect(missing.stderr == "forum: there is no thread #2\n")

    let notANumber = try forum.run(["show", "abc"])
    #expect(notANumber.status == 2)
    #expect(notANumber.stderr == "forum: thread must be a number like 12, not 'abc'\n")
  }

  @Test func aPagePastTheEndSaysWhatToTry() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "only"])
    for number in 1...3 { try forum.ok(["comment", "1", "c\(number)"]) }
    let list = try forum.run(["list", "--page", "2"])
    #expect(list.status == 4)
    #expect(list.stdout.isEmpty)
    #expect(list.stderr == "forum: There is no page 2. Try: list --page last\n")
    let far = try forum.run(["list", "--page", "99"])
    #expect(far.status == 4)
    let show = try forum.run(["show", "1", "--page", "4"])
    #expect(show.status == 4)
    #expect(show.stderr == "forum: There is no page 4. Try: show 1 --page 1\n")
  }
}
