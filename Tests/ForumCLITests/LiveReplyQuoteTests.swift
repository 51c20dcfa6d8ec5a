import Foundation
import Testing

/// A reply that arrives live in the thread on screen is quoted as a page quotes it.
@Suite(
  "live replies (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct LiveReplyQuoteTests {
  /// The live comments were read without their quotes, so each reply said "(comment gone)" of
  /// a comment right above it.
  @Test func aLiveReplyQuotesTheCommentItAnswers() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Alice"])
    try forum.ok(["new", "--title", "talk"], profile: "bob")
    try forum.ok(["comment", "1", "original words"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try forum.ok(["reply", "1/1", "my answer"], profile: "bob")
    let screen = try tmux.wait("the reply") {
      $0.contains { $0.trimmingCharacters(in: .whitespaces) == "my answer" }
    }
    #expect(screen.contains { $0.contains("> 1 Alice: original words") }, "\(screen)")
    #expect(!screen.contains { $0.contains("(comment gone)") }, "\(screen)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
