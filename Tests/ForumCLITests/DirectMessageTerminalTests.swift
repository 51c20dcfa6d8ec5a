import Foundation
import Testing

/// Direct messages at a real terminal with three people: a message to you while you are elsewhere
/// is one notice line, another pair's messages never show, and `dm @HANDLE` is a room.
@Suite(
  "direct messages at the prompt (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct DirectMessageTerminalTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    let me = try forum.ok(["--json", "whoami"], profile: profile)
    return "@" + (try me.json().string("userName") ?? "?")
  }

  @Test func noticesAndTheRoom() throws {
    let forum = try ForumFixture()
    for (profile, name) in [("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")] {
      try forum.ok(["name", name], profile: profile)
    }
    let (alice, bob) = (try handle(forum, "alice"), try handle(forum, "bob"))
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")

    // Carol writes to bob, then bob to alice: alice is told of bob's message only, in one line.
    try forum.ok(["dm", bob, "carol-to-bob private"], profile: "carol")
    try tmux.type("half typed")
    try forum.ok(["dm", alice, "hello from bob"], profile: "bob")
    var screen = try tmux.wait("the notice") {
      $0.contains { $0.contains("✉ Bob \(bob): hello from bob — dm \(bob)") }
        && $0.last == "forum> half typed"
    }
    #expect(!screen.contains { $0.contains("carol-to-bob") }, "another pair's message never shows")
    try tmux.press("C-u")

    // `dm @bob` is a room: history, your line marked, bob's arriving, no notice inside.
    try tmux.enter("dm \(bob)")
    screen = try tmux.waitForPrompt("\(bob) dm>")
    #expect(screen.contains { $0.hasSuffix(" Bob: hello from bob") })
    try tmux.enter("hi bob, it's alice")
    try tmux.wait("my line") { $0.contains { $0.hasSuffix(" Alice (you): hi bob, it's alice") } }
    try forum.ok(["dm", alice, "second from bob"], profile: "bob")
    screen = try tmux.wait("bob's line") { $0.contains { $0.hasSuffix(" Bob: second from bob") } }
    #expect(!screen.contains { $0.contains("✉") && $0.contains("second from bob") })
    try tmux.enter("/leave")
    try tmux.waitForPrompt("forum>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)

    let shown = try forum.ok(["--json", "dm", alice], profile: "bob").json()
    #expect(
      shown.objects("results").compactMap { $0.string("text") } == [
        "hello from bob", "hi bob, it's alice", "second from bob",
      ])
  }
}
