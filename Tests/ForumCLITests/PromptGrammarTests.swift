import Foundation
import Testing

/// DESIGN §4 at a real prompt: inside a thread, `comment TEXT` is TEXT for that thread whatever
/// it starts with; `#N` addresses another thread; `/N` is a comment of the current one.
@Suite(
  "the command grammar at the prompt (tmux)")
struct PromptGrammarTests {
  @Test func insideAThreadTheTextIsTheText() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "party"])
    try forum.ok(["new", "--title", "other"])
    try forum.ok(["new", "--title", "third"])
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")

    try tmux.enter("comment 2 of us are coming")
    try tmux.wait("posted to #1") { $0.contains("Posted 1/1.") }
    try tmux.enter("comment I'm bringing \"cake\"  too")
    try tmux.wait("posted 1/2") { $0.contains("Posted 1/2.") }
    try tmux.enter("comment #2 over there")
    try tmux.wait("posted to #2") { $0.contains("Posted 2/1.") }
    try tmux.waitForPrompt("forum #1>")

    // `delete 3` is thread #3 even here; `/1` is a comment of the current thread.
    try tmux.enter("delete 3")
    try tmux.waitForPrompt("Delete? [y/N]")
    #expect(try tmux.screen().contains { $0.hasPrefix("This will delete #3 \"third\"") })
    try tmux.enter("n")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("delete /1")
    try tmux.waitForPrompt("Delete? [y/N]")
    #expect(try tmux.screen().contains { $0.hasPrefix("This will delete 1/1 \"2 of us") })
    try tmux.enter("y")
    try tmux.wait("deleted 1/1") { $0.contains("Deleted 1/1.") }
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)

    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] } == [
        .string("I'm bringing \"cake\"  too")
      ])
    #expect(try forum.storedComments(ofThread: 2).map { $0["text"] } == [.string("over there")])
    #expect(try forum.storedThreads().count == 3)
  }
}

@Suite(
  "questions at the prompt (tmux)")
struct QuestionTests {
  @Test func ctrlDAtAQuestionLeavesNoBlankLinesBehind() throws {
    let forum = try ForumFixture()
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("new")
    try tmux.waitForPrompt("Title:")
    try tmux.press("C-d")
    try tmux.wait("cancelled") { $0.contains("Cancelled; nothing was saved.") }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("whoami")
    let screen = try tmux.wait("whoami") { $0.contains { $0.hasPrefix("user id:") } }
    let title = try #require(screen.firstIndex { $0.hasPrefix("Title:") })
    #expect(screen[title + 1] == "Cancelled; nothing was saved.", "\(screen)")
    let asked = try #require(screen.firstIndex { $0 == "forum> whoami" })
    #expect(!screen[asked + 1].isEmpty, "no blank line before the output: \(screen)")
  }
}
