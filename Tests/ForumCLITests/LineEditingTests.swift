import Foundation
import Testing

/// Issue #21 items 5 and 6: line editing survives Ctrl-Z and `fg`, and Tab completes handles.
@Suite(
  "line editing (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct LineEditingTests {
  @Test func ctrlZAndFgKeepLineEditing() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Alice"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", interactiveShell: true)
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.type("hello")
    try tmux.wait("typed") { $0.last == "forum> hello" }
    try tmux.press("C-z")
    try tmux.wait("stopped") { $0.contains { $0.contains("Stopped") } && $0.last == "$" }
    try tmux.enter("fg")
    try tmux.wait("back, the line redrawn") { $0.last == "forum> hello" }
    // Arrows and Ctrl-A edit the line; in cooked mode they would print ^[[D and ^A.
    try tmux.press("Left", "Left")
    try tmux.type("X")
    try tmux.press("C-a")
    try tmux.type("Y")
    try tmux.wait("edited") { $0.last == "forum> YhelXlo" }
    #expect(!(try tmux.screen()).contains { $0.contains("^[[D") || $0.contains("^A") })
    // Ctrl-E, Ctrl-U empties the line: Enter then runs what was typed after it, not the old
    // line.
    try tmux.press("C-e")
    try tmux.press("C-u")
    try tmux.enter("whoami")
    try tmux.wait("whoami ran") { $0.contains { $0.hasPrefix("Alice @") } }
    try tmux.waitForPrompt("forum>")
    // A second suspend keeps what was typed after the first `fg`.
    try tmux.type("after fg")
    try tmux.wait("typed") { $0.last == "forum> after fg" }
    try tmux.press("C-z")
    try tmux.wait("stopped again") {
      $0.filter { $0.contains("Stopped") }.count == 2 && $0.last == "$"
    }
    try tmux.enter("fg")
    try tmux.wait("back again") { $0.last == "forum> after fg" }
    try tmux.press("C-u")
    try tmux.enter("quit")
    try tmux.wait("the shell") { $0.last == "$" }
  }

  @Test func tabCompletesHandles() throws {
    let forum = try ForumFixture()
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName") ?? "?"
    try forum.ok(["--json", "whoami"], profile: "alice")
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    // The only other person: `@` alone completes to bob's handle.
    try tmux.type("dm @")
    try tmux.press("Tab")
    try tmux.wait("completed from @") { $0.last == "forum> dm @\(bob)" }
    try tmux.press("C-u")
    try tmux.type("dm @\(bob.prefix(2))")
    try tmux.press("Tab")
    try tmux.wait("completed from a prefix") { $0.last == "forum> dm @\(bob)" }
    #expect(!(try tmux.screen()).contains { $0.contains("@@") })
  }
}
