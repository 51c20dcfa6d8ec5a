import Foundation
import Testing

/// Issue #21 items 3, 4 and 7: in a room nothing addressed to you is skipped, commands print in
/// the room, and what the room shows counts as read.
@Suite(
  "rooms (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct RoomTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    let me = try forum.ok(["--json", "whoami"], profile: profile)
    return "@" + (try me.json().string("userName") ?? "?")
  }

  @Test func repliesMentionsAndOtherMessagesReachYouInARoom() throws {
    let forum = try ForumFixture()
    for (profile, name) in [("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")] {
      try forum.ok(["name", name], profile: profile)
    }
    let (alice, bob) = (try handle(forum, "alice"), try handle(forum, "bob"))
    try forum.ok(["new", "--title", "room"], profile: "bob")
    try forum.ok(["new", "--title", "questions"], profile: "bob")
    try forum.ok(["comment", "2", "alice asks something"], profile: "alice")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("chat 1")
    try tmux.waitForPrompt("#1 chat>")

    try forum.ok(["reply", "2/1", "here is the answer"], profile: "bob")
    try tmux.wait("the reply notice in the room") {
      $0.contains { $0.contains("replied to your 2/1 in #2/2") } && $0.last == "#1 chat>"
    }
    try forum.ok(["comment", "2", "ping \(alice), look"], profile: "bob")
    try tmux.wait("the mention notice in the room") {
      $0.contains { $0.contains("mentioned you in #2/3") }
    }
    // The room's own comments still arrive as its lines.
    try forum.ok(["comment", "1", "in the room"], profile: "bob")
    try tmux.wait("the room's line") { $0.contains { $0.hasSuffix(" Bob: in the room") } }
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")

    // In bob's dm room, carol's message to alice is a notice.
    try tmux.enter("dm \(bob)")
    try tmux.waitForPrompt("\(bob) dm>")
    try forum.ok(["dm", alice, "carol says hi"], profile: "carol")
    try tmux.wait("carol's notice") {
      $0.contains { $0.contains("✉ Carol") && $0.contains("carol says hi") }
    }
    try forum.ok(["dm", alice, "bob in the room"], profile: "bob")
    let screen = try tmux.wait("bob's line") {
      $0.contains { $0.hasSuffix(" Bob: bob in the room") }
    }
    #expect(!screen.contains { $0.contains("✉") && $0.contains("bob in the room") })
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")
  }

  @Test func commandsInARoomPrintThereEvenWithThePagerOn() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Bob"], profile: "bob")
    let bob = try handle(forum, "bob")
    try forum.ok(["new", "--title", "Findable zebra"], profile: "bob")
    try forum.ok(["dm", try handle(forum, "alice"), "a message"], profile: "bob")
    // No --no-pager and PAGER unset: output is paged when taller than the screen.
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("chat 1")
    try tmux.waitForPrompt("#1 chat>")
    try tmux.enter("/list")
    try tmux.wait("the list in the room") {
      $0.contains { $0.hasPrefix("#1 ") && $0.contains("Findable zebra") } && $0.last == "#1 chat>"
    }
    try tmux.enter("/inbox")
    try tmux.wait("the inbox in the room") {
      $0.contains { $0.contains(bob) && $0.contains("a message") } && $0.last == "#1 chat>"
    }
    try tmux.enter("/search zebra")
    try tmux.wait("the search in the room") {
      $0.filter { $0.contains("Findable zebra") }.count >= 2 && $0.last == "#1 chat>"
    }
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")
  }

  @Test func whatARoomShowsIsRead() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Bob"], profile: "bob")
    let alice = try handle(forum, "alice")
    try forum.ok(["new", "--title", "talk"], profile: "bob")
    try forum.ok(["comment", "1", "before"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("chat 1")
    try tmux.waitForPrompt("#1 chat>")
    let lines = (1...9).map { "comment 1 live \($0)" }
    #expect(try forum.script(lines, profile: "bob").status == 0)
    try tmux.wait("the ninth") { $0.contains { $0.hasSuffix(" Bob: live 9") } }
    let threads = try forum.ok(["--json", "list"]).json().objects("results")
    #expect(threads.first?.int("unread") == 0, "\(threads)")
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")

    try tmux.enter("dm @\(try handle(forum, "bob").dropFirst())")
    try tmux.waitForPrompt("@\(try handle(forum, "bob").dropFirst()) dm>")
    try forum.ok(["dm", alice, "read me live"], profile: "bob")
    try tmux.wait("bob's line") { $0.contains { $0.hasSuffix(" Bob: read me live") } }
    let inbox = try forum.ok(["--json", "inbox"]).json().objects("results")
    #expect(inbox.first?.int("unread") == 0, "\(inbox)")

    // At the plain prompt in a thread, live comments are read as well.
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum #1>")
    try tmux.enter("show 1")
    try tmux.wait("the thread shown") { lines in
      guard let typed = lines.lastIndex(of: "forum #1> show 1") else { return false }
      return typed < lines.count - 2 && lines.last == "forum #1>"
    }
    try forum.ok(["comment", "1", "under the prompt"], profile: "bob")
    try tmux.wait("the live comment") { $0.contains { $0.contains("under the prompt") } }
    let after = try forum.ok(["--json", "list"]).json().objects("results")
    #expect(after.first?.int("unread") == 0, "\(after)")
  }
}
