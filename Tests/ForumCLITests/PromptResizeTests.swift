import Foundation
import Testing

/// Issue 21 item 15: a terminal resized while a half-typed line wraps. The terminal (tmux, as
/// most) reflows the line; readline redrew it from where it believed the line started, leaving a
/// ghost prompt line when narrowed and overwriting a line of output when widened.
@Suite(
  "the prompt after a resize (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct PromptResizeTests {
  private static let banner = "Type 'help' for commands"

  /// Resizes the window, then types `marker`: keys are read after the resize is handled, so once
  /// the marker shows, the redraw is done.
  private func resize(
    _ tmux: TmuxSession, columns: Int, marker: String, typed: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [String] {
    try tmux.run(["resize-window", "-t", tmux.target, "-x", String(columns), "-y", "30"])
    try tmux.type(marker)
    return try tmux.wait("the line after the resize to \(columns)", sourceLocation: sourceLocation)
    {
      $0.contains { $0.hasSuffix(typed) }
    }
  }

  @Test(arguments: [(100, 40), (60, 23)])
  func aWrappedLineIsDrawnOnceAfterAResize(wide: Int, narrow: Int) throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.run(["resize-window", "-t", tmux.target, "-x", String(wide), "-y", "30"])
    try tmux.waitForPrompt("forum>")
    var typed =
      "comment #1 " + (1...24).map { String(format: "word%02d", $0) }.joined(separator: " ")
    try tmux.type(typed)
    try tmux.wait("the half-typed line") { $0.contains { $0.hasSuffix(typed) } }

    for (columns, marker) in [(narrow, " X"), (wide, "Y"), (narrow, "Z"), (wide, "W")] {
      typed += marker
      let screen = try resize(tmux, columns: columns, marker: marker, typed: typed)
      // The pane's lines joined where they wrapped (capture-pane -J): the prompt once, whole,
      // and the banner above it still there.
      let prompts = screen.filter { $0.hasPrefix("forum>") }
      #expect(
        prompts == ["forum> " + typed], "at \(columns) columns:\n\(screen.joined(separator: "\n"))")
      #expect(
        screen.filter { $0.contains(PromptResizeTests.banner) }.count == 1,
        "at \(columns) columns:\n\(screen.joined(separator: "\n"))")
    }
    // The line is still the one being edited: Enter runs it whole, once.
    try tmux.press("Enter")
    let done = try tmux.wait("the comment posted") { $0.last == "forum>" }
    #expect(done.suffix(3) == ["forum> " + typed, "Posted 1/1.", "forum>"], "\(done)")
    let json = try forum.ok(["--json", "show", "1"]).json()
    #expect(
      json.objects("results").first?.string("text") == String(typed.dropFirst("comment #1 ".count)))
  }
}
