import Foundation
import Testing

/// DESIGN §4: a draft is checked before it is typed and never lost after; an editor can compose.
@Suite(
  "drafts at the prompt (tmux)")
struct DraftTests {
  static let jpeg = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/corpus/jpeg/testorig.jpg").path

  @Test func theTargetIsCheckedBeforeTheTextIsTyped() throws {
    let forum = try ForumFixture()
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 99")
    let screen = try tmux.wait("the refusal") { $0.contains("forum: there is no thread #99") }
    #expect(!screen.contains { $0.hasPrefix("Comment (end with") })
    try tmux.waitForPrompt("forum>")
  }

  @Test func aRefusedPostKeepsTheDraftEvenAcrossACrash() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "going away"])
    try forum.ok(["new", "--title", "staying"])
    let refused = try forum.draftsDirectory() + "/comment-1.txt"
    let drafts = try forum.draftsDirectory() + "/comment-2.txt"
    do {
      let tmux = try TmuxSession(forum: forum, profile: "alice")
      defer { _ = try? tmux.run(["kill-server"]) }
      try tmux.waitForPrompt("forum>")
      try tmux.enter("comment 1")
      try tmux.waitForPrompt(">")
      try tmux.enter("precious words")
      try forum.ok(["delete", "1", "--yes"])  // the thread goes while the text is typed
      try tmux.enter(".")
      try tmux.wait("the refusal") { $0.contains("forum: there is no thread #1") }
      try tmux.wait("the draft kept") {
        $0.contains("Your text for #1 is kept; it is offered again when you next write there.")
      }
      #expect(try String(contentsOfFile: refused, encoding: .utf8) == "precious words")

      // A second draft, for another thread (#1's is not offered there), half typed when the
      // process dies.
      try tmux.enter("comment 2")
      try tmux.waitForPrompt(">")
      try tmux.enter("typed before the crash")
      try tmux.wait("saved") {
        _ = $0
        return (try? String(contentsOfFile: drafts, encoding: .utf8)) == "typed before the crash"
      }
    }  // kill-server: forum dies with the draft unsent
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 2")
    try tmux.waitForPrompt("Post it to #2? [Y/n] (n discards it)")
    #expect(try tmux.screen().contains("  typed before the crash"))
    try tmux.press("Enter")
    try tmux.wait("posted") { $0.contains("Posted 2/1.") }
    #expect(!FileManager.default.fileExists(atPath: drafts), "posted drafts are removed")
    #expect(
      try forum.storedComments(ofThread: 2).map { $0["text"] } == [
        .string("typed before the crash")
      ])
  }

  @Test func aRefusedImagePathAsksAgainAndEnterPostsWithout() throws {
    let forum = try ForumFixture()
    let home = forum.root + "/home"
    try FileManager.default.copyItem(atPath: Self.jpeg, toPath: home + "/my pic.jpg")
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("new")
    try tmux.waitForPrompt("Title:")
    try tmux.enter("With a picture")
    try tmux.waitForPrompt(">")
    try tmux.enter("body")
    try tmux.enter(".")
    try tmux.waitForPrompt("Image path (Enter for none):")
    try tmux.enter("~/missing.jpg")
    try tmux.wait("the refusal naming the path") {
      $0.contains("forum: cannot attach image: ~/missing.jpg: no such file")
    }
    try tmux.waitForPrompt("Image path (Enter for none):")
    // As a terminal pastes a dragged file: quoted, with a trailing space.
    try tmux.enter("'~/my pic.jpg' ")
    try tmux.wait("posted") { $0.contains("Posted #1.") }
    #expect(try forum.storedThreads().first?["fileName"]?.stringValue?.hasSuffix(".jpg") == true)

    try tmux.enter("new")
    try tmux.waitForPrompt("Title:")
    try tmux.enter("No picture")
    try tmux.enter(".")
    try tmux.waitForPrompt("Image path (Enter for none):")
    try tmux.enter("/nowhere/x.png")
    try tmux.wait("refused") {
      $0.contains("forum: cannot attach image: /nowhere/x.png: no such file")
    }
    try tmux.waitForPrompt("Image path (Enter for none):")
    try tmux.press("Enter")
    try tmux.wait("posted without") { $0.contains("Posted #2.") }
    #expect(try forum.storedThreads().map { $0["fileName"] == nil } == [false, true])
    #expect(!FileManager.default.fileExists(atPath: try forum.draftsDirectory() + "/thread.txt"))
  }

  @Test func anEditorComposesAndItsFileIsRemoved() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let editor = forum.root + "/editor.sh"
    let seen = forum.root + "/editor-saw"
    try """
    #!/bin/sh
    echo "$1" > '\(seen)'
    cat "$1" >> '\(seen)'
    printf 'from the editor\\nsecond line\\n' >> "$1"
    """.write(toFile: editor, atomically: true, encoding: .utf8)
    chmod(editor, 0o755)
    let tmux = try TmuxSession(
      forum: forum, profile: "alice", environment: ["EDITOR": editor, "TMPDIR": forum.root])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 1")
    try tmux.waitForPrompt(">")
    try tmux.enter("typed first")
    try tmux.enter("\\e")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    try tmux.enter("comment 1 --edit")
    try tmux.wait("posted again") { $0.contains("Posted 1/2.") }
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] } == [
        .string("typed first\nfrom the editor\nsecond line"),
        .string("from the editor\nsecond line"),
      ])
    let temporary = try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n")[0]
    #expect(temporary.hasPrefix(forum.root + "/forum-draft-"))
    #expect(
      !FileManager.default.fileExists(atPath: String(temporary)), "the editor's file is removed")
  }
}
