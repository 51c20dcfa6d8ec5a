import Foundation
import Testing

/// Issue #21 items 8 and 11: people who share a display name are told apart wherever they meet,
/// a handle is never cut where there is room, and nothing overflows a narrow terminal.
@Suite("names and narrow widths")
struct LayoutTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    try forum.ok(["--json", "whoami"], profile: profile).json().string("userName") ?? "?"
  }

  private func twoKens() throws -> (ForumFixture, String, String) {
    let forum = try ForumFixture()
    try forum.ok(["name", "Ken"], profile: "ken1")
    try forum.ok(["name", "Ken"], profile: "ken2")
    try forum.ok(
      ["new", "--title", "Who is who", "--description", "a thread by the first Ken"],
      profile: "ken1")
    try forum.ok(["comment", "1", "the second Ken answers"], profile: "ken2")
    return (forum, try handle(forum, "ken1"), try handle(forum, "ken2"))
  }

  @Test func twoKensInAThreadAreToldApart() throws {
    let (forum, first, second) = try twoKens()
    let shown = try forum.ok(["show", "1"]).stdoutLines
    #expect(shown.contains { $0.hasPrefix("by Ken @\(first) ") }, "\(shown)")
    #expect(shown.contains { $0.contains(" Ken @\(second) · ") }, "\(shown)")
  }

  @Test func listKeepsTheWholeHandleAtWideTerminals() throws {
    let (forum, _, second) = try twoKens()
    try forum.ok(["new", "--title", "Second Ken's"], profile: "ken2")
    for columns in ["80", "120"] {
      let listed = try forum.run(["list"], environment: ["COLUMNS": columns])
      #expect(listed.status == 0)
      #expect(listed.stdoutLines.contains { $0.contains("Ken @\(second) ") }, "\(listed.stdout)")
      for line in listed.stdoutLines {
        #expect(displayWidth(line) <= Int(columns)!, "\(columns): «\(line)»")
      }
    }
  }

  @Test func nothingOverflowsFortyColumns() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Alexandra Longname-Smith"], profile: "alice")
    try forum.ok([
      "new", "--title", "A title that is rather long for a narrow window", "--description",
      "and a description",
    ])
    for number in 1...3 {
      try forum.ok(["comment", "1", "comment \(number) with some words in it"])
    }
    try forum.ok(["edit", "1", "--title", "An edited title that is rather long as well"])
    try forum.ok(["edit", "1/1", "edited words"])
    try forum.ok(["comment", "1", "another from bob"], profile: "bob")
    for arguments in [["list"], ["show", "1"]] {
      let result = try forum.run(arguments, environment: ["COLUMNS": "40"])
      #expect(result.status == 0, "\(result.summary)")
      for line in result.stdoutLines {
        #expect(displayWidth(line) <= 40, "\(arguments): «\(line)» is \(displayWidth(line)) cells")
        #expect(
          !line.hasSuffix("…") || !line.contains("posted"), "the header is not cut: «\(line)»")
      }
    }
    // Piped at 80 columns the header says everything, uncut.
    let shown = try forum.run(["show", "1"]).stdoutLines
    #expect(shown.contains { $0.contains("4 comments") }, "\(shown)")
    #expect(shown.contains { $0.contains("(edited ") && !$0.hasSuffix("…") }, "\(shown)")
    for line in shown { #expect(displayWidth(line) <= 80, "«\(line)»") }
  }
}

/// Issue #21 items 12, 13 and 15: `next` after `search`, a broken pager, a gap before the first
/// comment.
@Suite("paging and widths")
struct PagingTests {
  @Test func nextAfterSearchTurnsTheSearchsPage() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "a long thread"])
    var lines = (1...25).map { "new --title needle\($0)" }
    lines += (1...25).map { "comment 1 filler \($0)" }
    #expect(try forum.script(lines).status == 0)
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("leave")
    try tmux.waitForPrompt("forum>")
    try tmux.run(["clear-history", "-t", tmux.target])
    try tmux.press("C-l")
    try tmux.enter("search needle")
    try tmux.wait("the first page") { $0.contains { $0.hasPrefix("page 1 — more: --page 2") } }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("next")
    let screen = try tmux.wait("the search's second page") {
      $0.last == "forum>" && $0.contains("forum> next")
    }
    let after = screen[(screen.lastIndex(of: "forum> next") ?? 0)...]
    #expect(after.contains { $0.contains("needle") }, "\(after)")
    #expect(!after.contains { $0.contains("filler") }, "\(after)")
  }

  @Test func aBrokenPagerFallsBackToPlainOutputAndSaysSoOnce() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "tall"])
    #expect(try forum.script((1...40).map { "comment 1 line \($0)" }).status == 0)
    let tmux = try TmuxSession(
      forum: forum, profile: "alice", environment: ["PAGER": "/nonexistent"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1 --page 2")
    try tmux.wait("the output anyway") { $0.contains { $0.hasSuffix("line 40") } }
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("show 1")
    try tmux.wait("the first page anyway") {
      $0.contains { $0.hasSuffix("line 20") } && $0.last == "forum #1>"
    }
    let screen = try tmux.screen()
    #expect(
      screen.filter { $0.hasPrefix("forum: the pager \"/nonexistent\" could not run") }.count == 1,
      "\(screen)")
  }

  @Test func aGapBeforeTheFirstCommentDoesNotCountFromZero() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "busy"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("comment")
    try tmux.waitForPrompt(">")
    #expect(try forum.script((1...15).map { "comment 1 burst \($0)" }, profile: "bob").status == 0)
    try tmux.press("C-c")
    let screen = try tmux.wait("the burst") { $0.contains { $0.hasSuffix("burst 15") } }
    #expect(screen.contains { $0.contains("… 5 more before these:") }, "\(screen)")
    #expect(!screen.contains { $0.contains("since comment 0") })
  }
}
