import Foundation
import Testing

/// Issue 28 H8: letting a reply's draft go (Ctrl-D after a line, Ctrl-D on an empty draft,
/// Ctrl-C) crashed forum or posted nothing with "The comment is empty"; at the prompt it ended
/// the session. Each way now keeps or drops the draft as `comment` does.
@Suite(
  "a cancelled reply (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct ReplyCancelTests {
  private func board() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    try forum.ok(["comment", "1", "first"])
    return forum
  }

  @Test func atThePrompt() throws {
    let forum = try board()
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    // A line, then Ctrl-D: kept for 1/1.
    try tmux.enter("reply 1/1")
    try tmux.waitForPrompt(">")
    try tmux.enterDraftLine("abc")
    try tmux.press("C-d")
    try tmux.wait("kept") { $0.contains { $0.hasPrefix("Your text for 1/1 is kept") } }
    try tmux.waitForPrompt("forum>")
    #expect(!(try tmux.screen()).contains { $0.contains("is empty") }, "no post of empty text")
    let kept = try forum.draftsDirectory() + "/reply-1-1.txt"
    #expect(try String(contentsOfFile: kept, encoding: .utf8) == "abc")
    // Offered and discarded; then Ctrl-D on an empty draft.
    try tmux.enter("reply 1/1")
    try tmux.waitForPrompt("Post it to 1/1? [Y/n] (n discards it)")
    try tmux.enter("n")
    try tmux.waitForPrompt(">")
    try tmux.press("C-d")
    try tmux.wait("nothing saved") { $0.contains("Cancelled; nothing was saved.") }
    try tmux.waitForPrompt("forum>")
    // A line, then Ctrl-C: dropped.
    try tmux.enter("reply 1/1")
    try tmux.waitForPrompt(">")
    try tmux.enterDraftLine("xyz")
    try tmux.press("C-c")
    try tmux.wait("dropped") { $0.filter { $0 == "Cancelled; nothing was saved." }.count == 2 }
    try tmux.waitForPrompt("forum>")
    #expect(!FileManager.default.fileExists(atPath: try forum.draftsDirectory() + "/reply-1-1.txt"))
    // The session goes on, and a reply still posts.
    try tmux.enter("reply 1/1 still here")
    try tmux.wait("posted") { $0.contains("Posted 1/2.") }
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
    let screen = try tmux.screen()
    #expect(!screen.contains { $0.contains("is empty") || $0.contains("Segmentation") })
    #expect(
      try forum.storedComments().map { $0["text"] } == [.string("first"), .string("still here")])
  }

  /// `forum reply 1/1` (and `forum comment 1`, alike) at a terminal, one key sequence each.
  @Test(arguments: [["reply", "1/1"], ["comment", "1"]])
  func oneShot(_ command: [String]) throws {
    let label = command[0] == "reply" ? "1/1" : "#1"
    let file = command[0] == "reply" ? "reply-1-1.txt" : "comment-1.txt"
    let cases: [(keys: [String], status: Int32, said: String, kept: String?)] = [
      (["abc", "Enter", "C-d"], 1, "Your text for \(label) is kept", "abc"),
      (["C-d"], 1, "forum: Cancelled; nothing was saved.", nil),
      (["xyz", "Enter", "C-c"], 130, "forum: Interrupted", nil),
    ]
    for (keys, status, said, kept) in cases {
      let forum = try board()
      let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: command)
      defer { _ = try? tmux.run(["kill-server"]) }
      try tmux.waitForPrompt(">")
      var typed = ""
      for key in keys {
        if key == "Enter" || key.hasPrefix("C-") {
          try tmux.press(key)
        } else {
          try tmux.type(key)
          typed = key
        }
        // Readline is back in raw mode only at the next `>`: a Ctrl-D sent sooner is lost.
        if key == "Enter" {
          try tmux.wait("the line taken") { $0.suffix(2) == ["> " + typed, ">"] }
        }
      }
      #expect(try tmux.waitForExit() == status, "\(command) \(keys)")
      let screen = try tmux.screen()
      #expect(screen.contains { $0.hasPrefix(said) }, "\(command) \(keys): \(screen)")
      #expect(!screen.contains { $0.contains("is empty") }, "\(command) \(keys): \(screen)")
      let path = try forum.draftsDirectory() + "/" + file
      #expect((try? String(contentsOfFile: path, encoding: .utf8)) == kept, "\(command) \(keys)")
      #expect(try forum.storedComments().count == 1)
    }
  }
}
