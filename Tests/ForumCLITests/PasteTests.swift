import Foundation
import Testing

/// Pasting several lines (bracketed paste): at the prompt each runs in turn, echoed; in a draft
/// they are lines, and a pasted `.` ends it.
@Suite(
  "paste (tmux)")
struct PasteTests {
  private func paste(_ tmux: TmuxSession, _ text: String) throws {
    try tmux.run(["set-buffer", "-b", "paste", text])
    // -p: bracketed, as a terminal pastes when the program asked for it; -r: newlines as LF.
    try tmux.run(["paste-buffer", "-p", "-r", "-d", "-b", "paste", "-t", tmux.target])
  }

  @Test func aPastedBlockRunsLineByLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "pasted"])
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try paste(tmux, "whoami\nlist\n")
    let screen = try tmux.wait("both ran") {
      $0.contains { $0.hasPrefix("user id:") } && $0.contains { $0.hasPrefix("#1 ●  pasted") }
    }
    #expect(!screen.contains { $0.contains("unknown command") }, "\(screen)")
    #expect(screen.contains("forum> list"))
    try tmux.waitForPrompt("forum>")
  }

  @Test func pastedLinesEnterADraftAndAPastedDotEndsIt() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 1")
    try tmux.waitForPrompt(">")
    try paste(tmux, "line one\nline two\n.\n")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    try tmux.waitForPrompt("forum>")
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] } == [.string("line one\nline two")])
  }
}
