import Foundation
import Testing

/// Issue 21: a paste into a room is text. Several lines ask once how to send them; a pasted
/// line starting with `/` is posted, never run.
@Suite(
  "pasting into a room (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct RoomPasteTests {
  private func paste(_ tmux: TmuxSession, _ text: String) throws {
    try tmux.run(["set-buffer", "-b", "paste", text])
    // -p: bracketed, as a terminal pastes when the program asked for it; -r: newlines as LF.
    try tmux.run(["paste-buffer", "-p", "-r", "-d", "-b", "paste", "-t", tmux.target])
  }

  /// As a terminal that does not bracket pastes sends one: keys, each newline a carriage
  /// return (Enter).
  private func pasteUnbracketed(_ tmux: TmuxSession, _ text: String) throws {
    try tmux.run(["set-buffer", "-b", "paste", text])
    try tmux.run(["paste-buffer", "-d", "-b", "paste", "-t", tmux.target])
  }

  private func texts(_ forum: ForumFixture) throws -> [String] {
    try forum.storedComments().compactMap { $0["text"]?.stringValue }
  }

  @Test func aPasteOfSeveralLinesAsksOnceAndASlashLineIsText() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "room"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("chat 1")
    try tmux.waitForPrompt("#1 chat>")

    // A pasted line that looks like a command is posted as it is.
    try paste(tmux, "/leave now, said the log\n")
    try tmux.wait("the pasted line posted") { _ in
      (try? self.texts(forum)) == ["/leave now, said the log"]
    }
    try tmux.waitForPrompt("#1 chat>")

    // Five lines: asked once; a stray answer asks again; cancel sends nothing.
    try paste(tmux, "one\n/quit\nthree\nfour\nfive\n")
    try tmux.wait("the question") {
      $0.contains("You pasted 5 lines:")
        && $0.last?.hasPrefix("Send them as one message (1), as 5 messages (5)") == true
    }
    try tmux.enter("maybe")
    try tmux.wait("asked again") {
      $0.filter { $0.hasPrefix("Send them as one message") }.count == 2
    }
    try tmux.enter("c")
    try tmux.wait("cancelled") { $0.contains("Nothing was sent.") }
    try tmux.waitForPrompt("#1 chat>")
    #expect(try texts(forum) == ["/leave now, said the log"])

    // As one message, then as five (the `/quit` among them posted, the room still open).
    try paste(tmux, "alpha\nbeta\n")
    try tmux.wait("the question") { $0.last?.hasPrefix("Send them as one message") == true }
    try tmux.enter("1")
    try tmux.wait("one message") { _ in (try? self.texts(forum))?.last == "alpha\nbeta" }
    try tmux.waitForPrompt("#1 chat>")
    try paste(tmux, "one\n/quit\nthree\n")
    try tmux.wait("the question") { $0.last?.hasPrefix("Send them as one message") == true }
    try tmux.enter("3")
    try tmux.wait("three messages") { _ in (try? self.texts(forum).count) == 5 }
    #expect(try texts(forum).suffix(3) == ["one", "/quit", "three"])
    try tmux.waitForPrompt("#1 chat>")
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  /// Issue 28: the usual copy has no final newline. Its last line is part of the paste (it
  /// used to be left in the answer's field and never sent), bracketed or not.
  @Test func aPasteWithoutAFinalNewlineKeepsItsLastLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "room"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("chat 1")
    try tmux.waitForPrompt("#1 chat>")

    let question = "Send them as one message (1), as 3 messages (3), or cancel (c)?"
    try paste(tmux, "alpha\nbeta\ngamma")
    try tmux.wait("the question") { $0.contains("You pasted 3 lines:") }
    try tmux.waitForPrompt(question)  // nothing left in the answer's field
    try tmux.enter("3")
    try tmux.wait("three messages") { _ in (try? self.texts(forum)) == ["alpha", "beta", "gamma"] }
    try tmux.waitForPrompt("#1 chat>")  // and nothing left on the room's line

    try pasteUnbracketed(tmux, "one\ntwo\nthree")
    try tmux.wait("asked again") { $0.filter { $0.hasPrefix("You pasted 3 lines:") }.count == 2 }
    try tmux.waitForPrompt(question)
    try tmux.enter("1")
    try tmux.wait("one message") { _ in (try? self.texts(forum))?.last == "one\ntwo\nthree" }
    try tmux.waitForPrompt("#1 chat>")
    #expect(try texts(forum) == ["alpha", "beta", "gamma", "one\ntwo\nthree"])

    // A line typed and entered is still a line: sent, not asked about.
    try tmux.enter("typed")
    try tmux.wait("sent") { _ in (try? self.texts(forum))?.last == "typed" }
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")
  }
}
