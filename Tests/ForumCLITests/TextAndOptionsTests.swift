import Foundation
import Testing

/// Issue 21 #10 and issue 22's lows: options never hide inside text, one rule everywhere (the
/// README's "Text and options"), and a refused command that would have read lines skips them.
@Suite("text and options (pipes)")
struct TextAndOptionsTests {
  /// Thread #1 by alice, thread #2 by bob with comment 2/1.
  private func seeded() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    try forum.ok(["new", "--title", "second"], profile: "bob")
    try forum.ok(["comment", "2", "from bob"], profile: "bob")
    return forum
  }

  @Test func anOptionAfterTheThreadWithTextIsRefusedNotSwallowed() throws {
    let forum = try seeded()
    let before = try forum.fingerprint()
    for words in [
      ["comment", "1", "--json", "rocks"], ["comment", "1", "--no-color", "likewise"],
      ["comment", "1", "--image", "cafe.jpg"], ["reply", "2/1", "--json", "rocks"],
      ["dm", "@nobody", "--json", "hi"], ["comment", "--json", "is", "cool"],
    ] {
      let result = try forum.run(words)
      #expect(result.status == 2, "\(words): \(result.summary)")
      #expect(result.stderrLines.count == 1, "\(words): \(result.summary)")
      #expect(result.stdout.isEmpty, "\(words): \(result.summary)")
      #expect(result.stderr.contains(words.first { $0.hasPrefix("--") }!), "\(result.summary)")
    }
    let script = try forum.script(["comment 1 --json rocks", "comment 1 --image cafe.jpg"])
    #expect(script.status == 2, "\(script.summary)")
    #expect(script.stderrLines.count == 2, "\(script.summary)")
    #expect(try forum.fingerprint() == before)
  }

  @Test func optionsBeforeTheThreadOrAloneAfterItAreOptionsAndTheRestIsText() throws {
    let forum = try seeded()
    let json = try forum.ok(["comment", "--json", "1", "rocks"]).json()
    #expect(json["text"] as? String == "rocks")
    try forum.ok(["--json", "comment", "1", "global"]).json()
    try forum.ok(["comment", "1", "rocks", "--json", "and", "--image", "x"])
    try forum.ok(["comment", "1", "--", "I agree"])
    try forum.ok(["comment", "1", "-> this", "-1"])
    let script = try forum.script([
      "comment --no-color #1 scripted", "comment 1 --json", "from the draft", ".",
    ])
    #expect(script.status == 0, "\(script.summary)")
    #expect(script.stdoutLines.count == 2, "\(script.summary)")
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] } == [
        .string("rocks"), .string("global"), .string("rocks --json and --image x"),
        .string("-- I agree"), .string("-> this -1"), .string("scripted"),
        .string("from the draft"),
      ])
  }

  @Test func everyRefusalOfACommandThatWouldReadLinesSkipsThem() throws {
    let forum = try seeded()
    let before = try forum.fingerprint()
    for script in [
      ["new --title", "delete 1 --yes", "name Pwned", "."],
      ["new --title --description", "delete 1 --yes", "name Pwned", "."],
      ["edit 1 --title", "delete 1 --yes", "name Pwned", "."],
      ["edit 1 --description", "delete 1 --yes", "name Pwned", "."],
      ["edit 2", "delete 1 --yes", "name Pwned", "."],
      ["edit 9", "delete 1 --yes", "name Pwned", "."],
      ["reply --edit", "delete 1 --yes", "name Pwned", "."],
      ["reply 1 --edit", "delete 1 --yes", "name Pwned", "."],
      ["reply", "delete 1 --yes", "name Pwned", "."],
      ["dm --write", "delete 1 --yes", "name Pwned", "."],
    ] {
      let result = try forum.script(script)
      #expect(result.status != 0, "\(script): \(result.summary)")
      #expect(result.stderrLines.count == 1, "\(script): \(result.summary)")
      #expect(result.stdout.isEmpty, "\(script): \(result.summary)")
    }
    #expect(try forum.fingerprint() == before)
  }

  @Test func editOfAThreadInAScriptReadsItsTitleAndDescription() throws {
    let forum = try seeded()
    let result = try forum.script(["edit 1", "renamed", "new words", "two lines", ".", "list"])
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdoutLines.first == "Edited #1.", "\(result.summary)")
    let thread = try #require(try forum.storedThreads().first { $0["number"] == .int(1) })
    #expect(thread["title"] == .string("renamed"))
    #expect(thread["description"] == .string("new words\ntwo lines"))
    // An empty title line keeps the title.
    let kept = try forum.script(["edit 1", "", "only the description", "."])
    #expect(kept.status == 0, "\(kept.summary)")
    let again = try #require(try forum.storedThreads().first { $0["number"] == .int(1) })
    #expect(again["title"] == .string("renamed"))
    #expect(again["description"] == .string("only the description"))
  }
}

@Suite(
  "text and options at the prompt (tmux)")
struct PromptTextAndOptionsTests {
  @Test func insideAThreadAnOptionBeforeTheTextIsRefusedAsInAScript() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "party"])
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("comment --json is cool")
    try tmux.wait("refused") { $0.contains { $0.hasPrefix("forum: ") && $0.contains("--json") } }
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("comment is --json cool")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    try tmux.enter("comment --json #1 as JSON")
    try tmux.wait("json") { $0.contains { $0.contains("\"text\":\"as JSON\"") } }
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] } == [
        .string("is --json cool"), .string("as JSON"),
      ])
  }
}
