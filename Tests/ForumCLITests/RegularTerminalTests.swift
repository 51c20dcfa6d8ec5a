import Foundation
import Testing

/// Issue 21 at a real terminal: the line the prompt starts with, column headers, a followed
/// thread's comments told wherever you are, a muted thread's replies not told.
@Suite(
  "a regular at the prompt (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct RegularTerminalTests {
  @Test func thePromptStartsWithWhatIsNewAndListsHaveHeaders() throws {
    let forum = try ForumFixture()
    try forum.ok(["whoami"], profile: "bob")
    let bob = try #require(
      try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName"))
    try forum.ok(["new", "--title", "read before"])
    try forum.ok(["show", "1"], profile: "bob")
    try forum.ok(["comment", "1", "one"])
    try forum.ok(["comment", "1", "two"])
    try forum.ok(["new", "--title", "fresh"])
    try forum.ok(["new", "--title", "fresher"])
    try forum.ok(["dm", "@" + bob, "psst"])

    var tmux: TmuxSession? = try TmuxSession(
      forum: forum, profile: "bob", arguments: ["--no-pager"])
    var screen = try tmux!.waitForPrompt("forum>")
    let line = "2 new threads, 2 new comments in 1 thread you read, 1 message — unread"
    #expect(screen.contains(line), "\(screen)")

    try tmux!.enter("list")
    screen = try tmux!.wait("the list") { $0.contains { $0.contains("read before") } }
    let header = try #require(screen.firstIndex { $0.contains("+new") && $0.contains("author") })
    #expect(screen[header + 1].hasPrefix("+N: posts you have not read"), "\(screen)")
    #expect(screen[header + 2].hasPrefix("#3"), "the rows follow: \(screen)")
    try tmux!.enter("inbox")
    screen = try tmux!.wait("the inbox") { $0.contains { $0.contains("psst") } }
    #expect(screen.contains { $0.hasPrefix("with ") && $0.contains("last message") }, "\(screen)")
    try tmux!.enter("quit")
    #expect(try tmux!.waitForExit() == 0)
    _ = try? tmux!.run(["kill-server"])
    tmux = nil

    // Leaving was recorded: the next start has nothing new to say, until something comes.
    tmux = try TmuxSession(forum: forum, profile: "bob", arguments: ["--no-pager"])
    screen = try tmux!.waitForPrompt("forum>")
    #expect(!screen.contains { $0.contains("— unread") }, "\(screen)")
    try tmux!.enter("quit")
    #expect(try tmux!.waitForExit() == 0)
    _ = try? tmux!.run(["kill-server"])

    try forum.ok(["comment", "1", "three"])
    #expect(try forum.ok(["unread", "--count"], profile: "bob").stdout == "3\n")
    let japanese = try TmuxSession(
      forum: forum, profile: "bob", environment: ["LANG": "ja_JP.UTF-8"],
      arguments: ["--no-pager"])
    defer { _ = try? japanese.run(["kill-server"]) }
    screen = try japanese.waitForPrompt("forum>")
    #expect(
      screen.contains("読んだ 1 スレッドに新しいコメント 3 件 — 未読"), "\(screen)")
  }

  @Test func aFollowedThreadIsToldAndAMutedOneIsNot() throws {
    let forum = try ForumFixture()
    let bob = try #require(
      try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName"))
    try forum.ok(["new", "--title", "followed"])
    try forum.ok(["new", "--title", "muted"])
    try forum.ok(["comment", "2", "bob's own"], profile: "bob")
    try forum.ok(["new", "--title", "where bob reads"])
    try forum.ok(["follow", "1"], profile: "bob")
    try forum.ok(["mute", "2"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "bob", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 3")
    try tmux.waitForPrompt("forum #3>")
    try tmux.type("half typed")

    // A reply and a mention in the muted thread first, then a comment in the followed one:
    // once that one is on screen, the muted ones had their chance.
    try forum.ok(["reply", "2/1", "a reply bob never hears of"])
    try forum.ok(["comment", "2", "ping @\(bob) in the muted thread"])
    try forum.ok(["comment", "1", "news in the followed thread"])
    let screen = try tmux.wait("the follow notice") {
      $0.contains { $0.contains("in #1/1 \"followed\": news in the followed thread — show 1/1") }
        && $0.last == "forum #3> half typed"
    }
    #expect(!screen.contains { $0.contains("never hears") || $0.contains("muted thread") })

    // The notice's command opens that comment, marked.
    try tmux.press("C-u")
    try tmux.enter("show 1/1")
    let shown = try tmux.waitForPrompt("forum #1>")
    #expect(shown.contains { $0.hasPrefix("▶ 1 ") }, "\(shown)")
    // In the followed thread itself the comment shows as a comment, not as a notice.
    try forum.ok(["comment", "1", "said here"])
    let here = try tmux.wait("the comment in place") { $0.contains { $0.contains("said here") } }
    #expect(!here.contains { $0.contains("#1/2") }, "\(here)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  /// "Wherever you are": inside a `chat` room and a `dm` room too, with the typed line kept.
  @Test func aFollowedThreadIsToldInsideRooms() throws {
    let forum = try ForumFixture()
    let alice = try #require(
      try forum.ok(["--json", "whoami"], profile: "alice").json().string("userName"))
    try forum.ok(["whoami"], profile: "bob")
    try forum.ok(["new", "--title", "followed"])
    try forum.ok(["new", "--title", "the room"])
    try forum.ok(["follow", "1"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "bob", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")

    try tmux.enter("chat 2")
    try tmux.waitForPrompt("#2 chat>")
    try tmux.type("typing in the room")
    try forum.ok(["comment", "1", "news while bob chats"])
    var screen = try tmux.wait("the follow notice in the chat room") {
      $0.contains { $0.contains("in #1/1 \"followed\": news while bob chats — show 1/1") }
        && $0.last == "#2 chat> typing in the room"
    }
    #expect(!screen.contains { $0.contains("#2/") }, "nothing was posted in the room: \(screen)")
    try tmux.press("C-u")
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #2>")

    try tmux.enter("dm @" + alice)
    try tmux.waitForPrompt("@\(alice) dm>")
    try tmux.type("typing to alice")
    try forum.ok(["comment", "1", "news while bob writes to alice"])
    screen = try tmux.wait("the follow notice in the dm room") {
      $0.contains {
        $0.contains("in #1/2 \"followed\": news while bob writes to alice — show 1/2")
      } && $0.last == "@\(alice) dm> typing to alice"
    }
    try tmux.press("C-u")
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #2>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
