import Foundation
import Testing

/// Defect group 10: paging words, leaving, help that fits, words a person uses, local times.
@Suite("navigation and words")
struct NavigationTests {
  @Test func nextAndPrevContinueTheLastListing() throws {
    let forum = try ForumFixture()
    try forum.script((1...21).map { "new --title t\($0)" })
    let result = try forum.script(["list", "next", "prev", "next", "next"])
    #expect(result.status == 4, "\(result.summary)")
    let footers = result.stdoutLines.filter { $0.hasPrefix("page ") }
    #expect(
      footers == [
        "page 1/2 — more: list --page 2", "page 2/2", "page 1/2 — more: list --page 2", "page 2/2",
      ])
    #expect(result.stderrLines == ["forum: line 5: There is no page 3. Try: list --page last"])

    for word in ["q", "exit", "QUIT"] {
      let quit = try forum.script(["list", word, "new --title never"])
      #expect(quit.status == 0, "\(quit.summary)")
    }
    #expect(try forum.storedThreads().count == 21)
  }

  @Test(arguments: [40, 60, 80])
  func helpFitsTheTerminal(columns: Int) throws {
    let forum = try ForumFixture()
    for arguments in [["help"], ["--help"], ["help", "comment"], ["delete", "--help"]] {
      for lang in ["C", "ja_JP.UTF-8"] {
        let result = try forum.run(
          arguments, lang: lang, environment: ["COLUMNS": String(columns)])
        #expect(result.status == 0)
        for line in result.stdoutLines {
          #expect(displayWidth(line) <= columns, "\(arguments) \(lang): «\(line)»")
        }
      }
    }
    let japanese = try forum.run(["help"], lang: "ja_JP.UTF-8")
    #expect(japanese.stdoutLines.first == "コマンド:")
    #expect(japanese.stdout.contains("スレッドにコメント"))
  }

  @Test func messagesNameThingsAsAPersonWould() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let name = try forum.run(["name", " "])
    #expect(name.stderr == "forum: The name is empty.\n")
    let comment = try forum.run(["comment", "1", " "])
    #expect(comment.stderr == "forum: The comment is empty.\n")
    for result in [name, comment] {
      #expect(!result.stderr.contains("displayName") && !result.stderr.contains("text is"))
    }
  }

  @Test func timesAreLocalWithTheirZoneAndCommentsShowBoth() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    try forum.ok(["comment", "1", "hello"])
    let tokyo = try forum.run(["show", "1"], environment: ["TZ": "Asia/Tokyo"])
    #expect(tokyo.status == 0)
    let header = try #require(tokyo.stdoutLines.first { $0.hasPrefix("by ") })
    #expect(header.contains(" JST · "), "\(header)")
    let commentLine = try #require(tokyo.stdoutLines.first { $0.hasPrefix("  1 ") })
    #expect(commentLine.contains(" JST · now"), "absolute time and age: \(commentLine)")
    let utc = try forum.run(["show", "1"], environment: ["TZ": "UTC"])
    #expect(utc.stdoutLines.contains { $0.hasPrefix("by ") && $0.contains(" UTC · ") })
  }
}

@Suite(
  "navigation at the prompt (tmux)")
struct PromptNavigationTests {
  @Test func aDeletedCurrentThreadIsAnnouncedAndLeftAndLeaveLeaves() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "short-lived"])
    try forum.ok(["new", "--title", "staying"])
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 2")
    try tmux.waitForPrompt("forum #2>")
    try tmux.enter("leave")
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try forum.ok(["delete", "1", "--yes"])
    try tmux.wait("the announcement") { $0.contains("Thread #1 was deleted; you have left it.") }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("q")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func utf8IsReadUnderTheCLocaleAndBackspaceTakesAWholeLetter() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", environment: ["LANG": "C"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.type("comment 1 café")
    try tmux.press("BSpace")
    try tmux.press("Enter")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    #expect(try forum.storedComments(ofThread: 1).map { $0["text"] } == [.string("caf")])
  }

  @Test func theBannerIsJapaneseUnderAJapaneseLocale() throws {
    let forum = try ForumFixture()
    let tmux = try TmuxSession(
      forum: forum, profile: "alice", environment: ["LANG": "ja_JP.UTF-8"])
    defer { _ = try? tmux.run(["kill-server"]) }
    let screen = try tmux.waitForPrompt("forum>")
    #expect(screen.contains { $0.contains("コマンドの一覧は 'help'") }, "\(screen)")
  }
}

@Suite(
  "the pager (tmux)")
struct PagerTests {
  @Test func outputTallerThanTheScreenIsPagedAtATerminalOnly() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "long"])
    try forum.script((1...20).map { "comment 1 comment number \($0)" })
    let paged = forum.root + "/paged.txt"
    let pager = forum.root + "/pager.sh"
    try "#!/bin/sh\ncat > '\(paged)'\necho \"[pager saw $(wc -l < '\(paged)') lines]\"\n"
      .write(toFile: pager, atomically: true, encoding: .utf8)
    chmod(pager, 0o755)
    let tmux = try TmuxSession(forum: forum, profile: "alice", environment: ["PAGER": pager])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.wait("the pager") { $0.contains { $0.hasPrefix("[pager saw ") } }
    let text = try String(contentsOfFile: paged, encoding: .utf8)
    #expect(text.contains("comment number 20"))
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("list")  // one line: no pager
    try tmux.wait("the list") { $0.contains { $0.hasPrefix("#1 ●") } }
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
    #expect(try tmux.screen().filter { $0.hasPrefix("[pager saw ") }.count == 1)

    // Never in a pipe.
    unlink(paged)
    let piped = try forum.run(["show", "1"], environment: ["PAGER": pager])
    #expect(piped.stdout.contains("comment number 20"))
    #expect(!FileManager.default.fileExists(atPath: paged))
  }
}
