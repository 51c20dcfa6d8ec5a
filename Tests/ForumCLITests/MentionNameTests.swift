import Foundation
import Testing

/// Issue 28: a mention and `search --author` take a name as `dm` does: the handle in any case,
/// or a display name only one person has; a name several people have reaches nobody, and says so.
@Suite(
  "names in mentions and search (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct MentionNameTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    try forum.ok(["--json", "whoami"], profile: profile).json().string("userName") ?? "?"
  }

  @Test func aDisplayNameOrAHandleInAnyCaseMentions() throws {
    let forum = try ForumFixture()
    for (profile, name) in [("ken", "Ken"), ("bob", "Bob")] {
      try forum.ok(["name", name], profile: profile)
    }
    let ken = try handle(forum, "ken")
    try forum.ok(["new", "--title", "thanks"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "ken", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")

    let byName = try forum.ok(["comment", "1", "thanks @Ken"], profile: "bob")
    #expect(byName.stderr.isEmpty, "\(byName.summary)")
    try tmux.wait("the mention by display name") {
      $0.contains { $0.contains("mentioned you in #1/1") }
    }
    try forum.ok(["comment", "1", "and @\(ken.uppercased()) again"], profile: "bob")
    try tmux.wait("the mention by handle in capitals") {
      $0.contains { $0.contains("mentioned you in #1/2") }
    }

    // A second Ken: `@Ken` is nobody now, and the writer is told; the handle still reaches.
    try forum.ok(["name", "ken"], profile: "otherken")
    let ambiguous = try forum.ok(["comment", "1", "hi @Ken"], profile: "bob")
    #expect(
      ambiguous.stderrLines == [
        "forum: nobody was told of @Ken: 2 people are called Ken; use their @handle (`who` lists"
          + " them)"
      ], "\(ambiguous.summary)")
    try forum.ok(["comment", "1", "hi @\(ken)"], profile: "bob")
    let screen = try tmux.wait("the mention by handle") {
      $0.contains { $0.contains("mentioned you in #1/4") }
    }
    #expect(!screen.contains { $0.contains("#1/3") }, "\(screen.suffix(8))")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func searchByAuthorTakesNamesAsDMDoes() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Bob"], profile: "bob")
    try forum.ok(["new", "--title", "apple pie"])
    try forum.ok(["new", "--title", "apple tart"], profile: "bob")
    let bob = try handle(forum, "bob")
    func refs(_ arguments: [String]) throws -> [String] {
      let result = try forum.run(["--json", "search", "apple"] + arguments)
      #expect(result.status == 0, "\(result.summary)")
      return try result.json().objects("results").compactMap { $0.string("ref") }
    }
    for author in ["Bob", "@bob", "@" + bob.lowercased(), bob.uppercased(), "@" + bob] {
      #expect(try refs(["--author", author]) == ["2"], "\(author)")
    }
    // Two Bobs: said, as `dm @Bob` says it.
    try forum.ok(["name", "bob"], profile: "otherbob")
    for command in [["search", "apple", "--author", "Bob"], ["dm", "@Bob", "hi"]] {
      let result = try forum.run(command)
      #expect(result.status == 4, "\(result.summary)")
      #expect(result.stderrLines.count == 1, "\(result.summary)")
      #expect(
        result.stderr.hasPrefix("forum: 2 people are called Bob; say which by handle: @")
          && result.stderr.contains("@" + bob), "\(result.summary)")
    }
    #expect(try refs(["--author", bob.lowercased()]) == ["2"])
  }

  /// In a room too, a `@Name` two people have is said to reach nobody; the line is posted.
  @Test func aRoomSaysWhenAMentionReachesNobody() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Ken"], profile: "ken")
    try forum.ok(["name", "KEN"], profile: "otherken")
    try forum.ok(["new", "--title", "room"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "bob", arguments: ["--no-pager"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("chat 1")
    try tmux.waitForPrompt("#1 chat>")
    try tmux.enter("over to @Ken")
    try tmux.wait("said") {
      $0.contains { $0.hasPrefix("forum: nobody was told of @Ken: 2 people are called Ken") }
    }
    try tmux.waitForPrompt("#1 chat>")
    #expect(try forum.storedComments().map { $0["text"] } == [.string("over to @Ken")])
  }
}
