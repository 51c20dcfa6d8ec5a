import Foundation
import Testing

@testable import Datastore

/// Issue 20: the change feed keeps a window (`Change.window`). A live prompt that comes back
/// after more changes than that says so as one line, starts again from now, and goes on.
@Suite(
  "live prompt behind the feed's window (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct FeedWindowTerminalTests {
  private func trimmed(_ line: String) -> String { line.trimmingCharacters(in: .whitespaces) }

  @Test func aPromptBehindTheWindowSaysSoAndGoesOn() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "busy"], profile: "bob")
    try forum.ok(["comment", "1", "before the flood"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    // While alice types a comment (the live view waits), more changes than the feed keeps.
    try tmux.enter("comment")
    try tmux.waitForPrompt(">")
    do {
      let connection = try Connection(path: forum.db)
      try connection.execute(
        """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Change.window + 10))
        INSERT INTO changes(class, objectId, kind, readers)
        SELECT 'Note', printf('n%015d', i), 1, ' * ' FROM n
        """)
    }
    try forum.ok(["comment", "1", "after the flood"], profile: "bob")
    try tmux.press("C-c")
    let screen = try tmux.wait("the gap") {
      $0.contains { $0.contains("more happened than the live view keeps") }
    }
    #expect(
      screen.filter { $0.contains("more happened than the live view keeps") }.count == 1,
      "\(screen)")
    try tmux.waitForPrompt("forum #1>")
    // Read again, the thread is as it is now.
    try tmux.enter("show 1")
    let page = try tmux.wait("the thread") { $0.contains { trimmed($0) == "after the flood" } }
    #expect(page.contains { trimmed($0) == "before the flood" }, "\(page)")
    // And the live view goes on from there.
    try forum.ok(["comment", "1", "and then some"], profile: "bob")
    let live = try tmux.wait("a live comment") { $0.contains { trimmed($0) == "and then some" } }
    #expect(
      live.filter { $0.contains("more happened than the live view keeps") }.count == 1, "\(live)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func aPromptInsideTheWindowSaysNoGap() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "calm"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try forum.ok(["comment", "1", "just one"], profile: "bob")
    let screen = try tmux.wait("the comment") { $0.contains { trimmed($0) == "just one" } }
    #expect(!screen.contains { $0.contains("more happened than the live view keeps") }, "\(screen)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
