import Foundation
import Testing

/// Replies to you and your `@handle` elsewhere on the board, told live at the prompt, with the
/// half-typed line kept; nothing for a handle inside a longer word or for someone else.
@Suite(
  "replies and mentions at the prompt (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct MentionTerminalTests {
  @Test func aReplyAndAMentionElsewhereAreToldAboveThePrompt() throws {
    let forum = try ForumFixture()
    let alice = try #require(
      try forum.ok(["--json", "whoami"], profile: "alice").json().string("userName"))
    try forum.ok(["new", "--title", "questions"], profile: "bob")
    try forum.ok(["comment", "1", "alice asks something"], profile: "alice")
    try forum.ok(["new", "--title", "elsewhere"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.type("half typed")

    try forum.ok(["reply", "1/1", "here is the answer"], profile: "bob")
    var screen = try tmux.wait("the reply notice") {
      $0.contains { $0.contains("replied to your 1/1 in #1/2") } && $0.last == "forum> half typed"
    }
    #expect(screen.contains { $0.contains("here is the answer") && $0.contains("show 1/2") })

    // Not a mention: the handle inside a longer word, or an address.
    try forum.ok(["comment", "2", "mail x@\(alice) or @\(alice)x"], profile: "bob")
    try forum.ok(["comment", "2", "ping @\(alice), look"], profile: "bob")
    screen = try tmux.wait("the mention notice") {
      $0.contains { $0.contains("mentioned you in #2/2") } && $0.last == "forum> half typed"
    }
    #expect(!screen.contains { $0.contains("in #2/1") }, "\(screen)")
    #expect(screen.filter { $0.contains("mentioned you") }.count == 1, "\(screen)")
    try tmux.press("C-u")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
