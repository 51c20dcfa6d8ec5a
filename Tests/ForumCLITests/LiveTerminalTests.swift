import Foundation
import Testing

@testable import Datastore

/// The live prompt in a real terminal, with other people writing from other processes: what
/// arrives, how a gap is said, what happens when a thread or the whole database goes.
@Suite(
  "live prompt (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct LiveTerminalTests {
  private func trimmed(_ line: String) -> String { line.trimmingCharacters(in: .whitespaces) }

  /// Lines posted by `profile` as one script run (one process, quickly one after another).
  private func post(_ forum: ForumFixture, _ lines: [String], as profile: String) throws {
    let result = try forum.script(lines, profile: profile)
    #expect(result.status == 0, "\(result.summary)")
  }

  @Test func aBurstIsSaidAsAGapThatPointsAtTheRightPage() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "busy"], profile: "bob")
    try post(forum, (1...20).map { "comment 1 early \($0)" }, as: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")

    // 26 more while alice types a comment (no live lines in a draft): back at the prompt, the
    // newest ten, and a line for the sixteen before them.
    try tmux.enter("comment")
    try tmux.waitForPrompt(">")
    try post(forum, (21...46).map { "comment 1 burst \($0)" }, as: "bob")
    try tmux.press("C-c")
    let screen = try tmux.wait("the burst") { $0.contains { trimmed($0) == "burst 46" } }
    #expect(screen.contains { $0.contains("… 16 more since comment 20: next") }, "\(screen)")
    for number in 37...46 {
      #expect(screen.filter { trimmed($0) == "burst \(number)" }.count == 1, "burst \(number) once")
    }
    #expect(!screen.contains { trimmed($0) == "burst 36" }, "the gap is not printed")
    try tmux.waitForPrompt("forum #1>")

    // `next` is the page the gap starts on: comment 21 first.
    try tmux.enter("next")
    let page = try tmux.wait("page 2") { $0.contains { $0.hasPrefix("page 2/3") } }
    let first = page.lastIndex { $0.hasPrefix("  21 ") }
    #expect(first != nil && trimmed(page[first! + 1]) == "burst 21", "\(page.suffix(25))")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func anEmptyThreadDoesNotKeepSayingSoAboveLiveComments() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "quiet"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try post(forum, ["comment 1 first words"], as: "bob")
    let screen = try tmux.wait("the comment") { $0.contains { trimmed($0) == "first words" } }
    #expect(!screen.contains("No comments yet."), "\(screen)")
  }

  @Test func newThreadsEditsAndDeletionsAreAnnounced() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "watched"], profile: "bob")
    try post(forum, ["comment 1 one", "comment 1 two"], as: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.type("half typed")

    try forum.ok(["new", "--title", "Lunch?"], profile: "bob")
    // Above the prompt, the half-typed line kept.
    var screen = try tmux.wait("the new thread") {
      $0.contains { $0.contains("New thread #2") } && $0.last == "forum> half typed"
    }
    #expect(screen.contains { $0.contains("New thread #2") && $0.contains("Lunch?") })

    try tmux.press("C-u")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try forum.ok(["delete", "1/2", "--yes"], profile: "bob")
    screen = try tmux.wait("the deletion") { $0.contains { $0.contains("1/2 was deleted") } }

    try forum.ok(["delete", "1", "--yes"], profile: "bob")
    screen = try tmux.wait("the thread's deletion") {
      $0.contains("Thread #1 was deleted; you have left it.")
    }
    try tmux.waitForPrompt("forum>")
    #expect(
      try tmux.screen().filter { $0.contains("Thread #1 was deleted") }.count == 1, "said once")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func hostileTextInANoticeIsShownHarmlessly() throws {
    let forum = try ForumFixture()
    // The board and alice exist: the banner is then the first line.
    try forum.ok(["whoami"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    // Planted past the API (the title rules refuse control characters): a screen clear and a
    // right-to-left override.
    _ = try forum.openStore().master.create(
      "Thread", fields: ["title": .string("evil\u{1B}[2J\u{202E}txet")], acl: .publicReadWrite)
    let screen = try tmux.wait("the notice") { $0.contains { $0.contains("New thread #1") } }
    #expect(screen.contains { $0.contains("evil␛[2Jtxet") }, "\(screen)")
    #expect(screen.first?.hasPrefix("forum 0.1.0") == true, "the screen was not cleared")
  }

  @Test func aRemovedDatabaseIsSaidOnceAndThePromptLives() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "here today"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: forum.db + suffix)
    }
    try tmux.wait("the removal said") { $0.contains { $0.contains("was moved or deleted") } }
    usleep(500_000)  // a busy loop would say it again and again
    try tmux.enter("whoami")
    let screen = try tmux.wait("whoami") { $0.contains { $0.hasPrefix("profile:") } }
    #expect(screen.filter { $0.contains("was moved or deleted") }.count == 1, "\(screen)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func twoPeopleTalkInAChatRoom() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Alice"])
    try forum.ok(["name", "Bob"], profile: "bob")
    try forum.ok(["new", "--title", "Lunch"], profile: "bob")
    try post(forum, (1...25).map { "comment 1 old \($0)" }, as: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")

    // On entry: the last 20, and how to reach the five before them.
    try tmux.enter("chat 1")
    var screen = try tmux.waitForPrompt("#1 chat>")
    #expect(screen.contains { $0.contains("… 5 earlier comments: /show 1") })
    #expect(screen.contains { $0.hasSuffix(" Bob: old 6") })
    #expect(!screen.contains { $0.hasSuffix(" Bob: old 5") })

    // A typed line is posted as it is, and shows once, as yours.
    try tmux.enter("hi all, it's me")
    screen = try tmux.wait("my line") {
      $0.contains { $0.hasSuffix(" Alice (you): hi all, it's me") }
    }
    #expect(!screen.contains("#1 chat> hi all, it's me"), "the typed echo gives way to the message")
    try tmux.waitForPrompt("#1 chat>")

    // Bob's line arrives while alice has half a line typed.
    try tmux.type("half")
    try forum.ok(["comment", "1", "hello Alice"], profile: "bob")
    screen = try tmux.wait("bob's line") {
      $0.contains { $0.hasSuffix(" Bob: hello Alice") } && $0.last == "#1 chat> half"
    }
    try tmux.press("C-u")

    // Commands with a leading /, and // for a line that starts with /.
    try tmux.enter("/whoami")
    try tmux.wait("whoami") { $0.contains { $0.hasPrefix("profile:") } }
    try tmux.waitForPrompt("#1 chat>")
    try tmux.enter("//shrug")
    try tmux.wait("the slash line") { $0.contains { $0.hasSuffix(" Alice (you): /shrug") } }

    // /leave: back at the prompt, in the thread; nothing said twice there.
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")
    try forum.ok(["comment", "1", "after the room"], profile: "bob")
    screen = try tmux.wait("a live comment") { $0.contains { trimmed($0) == "after the room" } }
    #expect(screen.filter { $0.contains("hello Alice") }.count == 1)

    // Ctrl-D leaves a room, not forum.
    try tmux.enter("chat")
    try tmux.waitForPrompt("#1 chat>")
    try tmux.press("C-d")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)

    let texts = try forum.storedComments(ofThread: 1).compactMap { $0["text"]?.stringValue }
    #expect(texts.suffix(4) == ["hi all, it's me", "hello Alice", "/shrug", "after the room"])
  }

  @Test func chatNeedsATerminal() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "room"])
    let result = try forum.script(["chat 1", "hello"])
    #expect(result.status != 0)
    #expect(result.stderr.contains("chat needs a terminal"))
    #expect(try forum.storedComments().isEmpty)
  }
}
