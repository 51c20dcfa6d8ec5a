import Foundation
import Testing

/// Issue 21, "what a regular reaches for": going to a comment, `unread --count`, mute and
/// follow, headers only at a terminal — through the built binary and its pipes.
@Suite("a regular's commands (pipes)")
struct RegularTests {
  @Test func showThreadSlashCommentOpensItsPageAndMarksIt() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "long"])
    let lines = (1...25).map { "comment 1 number \($0)" }
    #expect(try forum.script(lines, profile: "bob").status == 0)

    let shown = try forum.ok(["show", "1/23"])
    #expect(shown.stdoutLines.contains { $0.hasPrefix("▶ 23 ") }, "\(shown.summary)")
    #expect(shown.stdoutLines.filter { $0.hasPrefix("▶") }.count == 1)
    #expect(shown.stdout.contains("number 21") && !shown.stdout.contains("number 20\n"))
    #expect(shown.stdout.contains("page 2/2"), "\(shown.summary)")
    let onFirst = try forum.ok(["show", "#1/3"])
    #expect(onFirst.stdoutLines.contains { $0.hasPrefix("▶  3 ") }, "\(onFirst.summary)")
    #expect(onFirst.stdout.contains("page 1/2"))

    let json = try forum.ok(["--json", "show", "1/23"]).json()
    #expect(json.int("page") == 2)
    #expect(json.object("comment")?.int("number") == 23)

    let missing = try forum.run(["show", "1/99"])
    #expect(missing.status == 4, "\(missing.summary)")
    #expect(missing.stdout.isEmpty)
    let both = try forum.run(["show", "1/3", "--page", "2"])
    #expect(both.status == 2, "\(both.summary)")
    // Scripts have no current thread: `/3` alone says so.
    let bare = try forum.script(["show /3"])
    #expect(bare.status == 2, "\(bare.summary)")
  }

  @Test func unreadCountForAShellPrompt() throws {
    let forum = try ForumFixture()
    try forum.ok(["whoami"], profile: "bob")  // bob joins before anything is posted
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "0\n")
    try forum.ok(["new", "--title", "one"])
    try forum.ok(["new", "--title", "two"])
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "2\n")
    try forum.ok(["show", "1"], profile: "bob")
    try forum.ok(["comment", "1", "first"])
    try forum.ok(["comment", "1", "second"])
    try forum.ok(["comment", "1", "mine never count"], profile: "bob")
    let bob = try #require(
      try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName"))
    try forum.ok(["dm", "@" + bob, "hello bob"])
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "4\n")
    let json = try forum.ok(["unread", "--count", "--json"], profile: "bob").json()
    #expect(json.int("total") == 4 && json.int("threads") == 1 && json.int("comments") == 2)
    #expect(json.int("commentThreads") == 1 && json.int("messages") == 1)
    #expect(json.object("since")?.string("__type") == "Date")
    #expect((json["more"] as? Bool) == false)
    // Reading takes them away; the sender's own count has none of her posts.
    try forum.ok(["show", "1"], profile: "bob")
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "2\n")
    #expect(try forum.ok(["unread", "--count"]).stdout == "1\n", "bob's comment, for alice")
    // Nothing changed by counting.
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "2\n")
    let extra = try forum.run(["unread", "--count", "7"], profile: "bob")
    #expect(extra.status == 2, "\(extra.summary)")
  }

  @Test func muteHidesAndFollowIsKept() throws {
    let forum = try ForumFixture()
    try forum.ok(["whoami"], profile: "bob")
    try forum.ok(["new", "--title", "noisy"])
    try forum.ok(["new", "--title", "quiet"])
    let muted = try forum.ok(["mute", "1"], profile: "bob")
    #expect(muted.stdout.hasPrefix("Muted #1"), "\(muted.summary)")
    #expect(try forum.ok(["mute", "1"], profile: "bob").stdout.contains("already muted"))

    let list = try forum.ok(["list"], profile: "bob")
    #expect(!list.stdout.contains("noisy") && list.stdout.contains("quiet"), "\(list.summary)")
    #expect(list.stdout.contains("(1 muted thread hidden)"))
    let json = try forum.ok(["--json", "list"], profile: "bob").json()
    #expect(numbers(json.objects("results")) == [2] && json.int("muted") == 1)
    let unread = try forum.ok(["--json", "list", "--unread"], profile: "bob").json()
    #expect(numbers(unread.objects("results")) == [2])
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "1\n")
    // Others see everything.
    #expect(try forum.ok(["list"], profile: "carol").stdout.contains("noisy"))
    // `show` still opens it.
    #expect(try forum.ok(["show", "1"], profile: "bob").stdout.contains("noisy"))

    let back = try forum.ok(["--json", "unmute", "1"], profile: "bob").json()
    #expect((back["muted"] as? Bool) == false && (back["changed"] as? Bool) == true)
    #expect(try forum.ok(["list"], profile: "bob").stdout.contains("noisy"))

    let follow = try forum.ok(["follow", "2"], profile: "bob")
    #expect(follow.stdout.hasPrefix("Following #2"), "\(follow.summary)")
    #expect(try forum.ok(["unfollow", "2"], profile: "bob").stdout.hasPrefix("Stopped following"))
    #expect(try forum.ok(["unfollow", "2"], profile: "bob").stdout.contains("did not follow"))
    let missing = try forum.run(["mute", "9"], profile: "bob")
    #expect(missing.status == 4, "\(missing.summary)")
    let which = try forum.run(["follow"], profile: "bob")
    #expect(which.status == 2, "\(which.summary)")
  }

  @Test func headersAreForTerminalsOnlyAndHelpTellsTheNewCommands() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "one"])
    let list = try forum.ok(["list"], profile: "bob")
    #expect(list.stdoutLines.first?.hasPrefix("#1") == true, "no header in a pipe: \(list.summary)")
    try forum.ok(["new", "--title", "findable words"], profile: "bob")
    let search = try forum.ok(["search", "findable"])
    #expect(search.stdoutLines.first?.hasPrefix("#2") == true, "\(search.summary)")

    let english = try forum.ok(["help"]).stdout
    for command in ["mute [THREAD]", "unmute", "follow [THREAD]", "unfollow", "unread [--count]"] {
      #expect(english.contains(command), "help lists \(command)")
    }
    #expect(try forum.ok(["help", "show"]).stdout.contains("show 12/14"))
    let japanese = try forum.run(["help"], lang: "ja_JP.UTF-8").stdout
    #expect(japanese.contains("ミュート") && japanese.contains("フォロー"), "\(japanese)")
    let unread = try forum.run(["help", "unread"], lang: "ja_JP.UTF-8").stdout
    #expect(unread.contains("unread --count") && unread.contains("ステータスバー"))
  }
}
