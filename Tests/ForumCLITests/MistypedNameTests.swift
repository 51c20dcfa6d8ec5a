import Foundation
import Testing

/// Issue 21: a mistyped `--profile` or `--db` would quietly make a new identity or a new empty
/// board. At a terminal it is said in one line, once; a script named what it meant and hears
/// nothing.
@Suite(
  "a mistyped profile or board is said (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct MistypedNameTests {
  /// Runs one command in tmux and returns the screen once forum has exited 0.
  private func atTerminal(
    _ forum: ForumFixture, profile: String, _ arguments: [String], database: String? = nil,
    lang: String = "C.UTF-8", sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [String] {
    let tmux = try TmuxSession(
      forum: forum, profile: profile, environment: ["LANG": lang], arguments: arguments,
      database: database)
    defer { stop(tmux) }
    #expect(
      try tmux.waitForExit(sourceLocation: sourceLocation) == 0, sourceLocation: sourceLocation)
    return try tmux.screen()
  }

  /// Kills the tmux server and waits until it answers no more: the next session of this
  /// fixture uses the same socket, and a server still exiting refuses it ("new-session failed").
  private func stop(_ tmux: TmuxSession) {
    _ = try? tmux.run(["kill-server"])
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline, (try? tmux.run(["has-session", "-t", tmux.target])) != nil {
      usleep(20_000)
    }
  }

  @Test func aNewProfileOnThisBoardIsSaidOnce() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "hello"], profile: "alice")
    try forum.ok(["whoami"], profile: "bob")
    let note = "forum: new profile \"alcie\" on this board"

    var screen = try atTerminal(forum, profile: "alcie", ["list"])
    #expect(screen.filter { $0 == note }.count == 1, "\(screen)")
    #expect(screen.contains { $0.contains("hello") }, "the command still ran: \(screen)")
    // Once: the profile is somebody here now.
    screen = try atTerminal(forum, profile: "alcie", ["list"])
    #expect(!screen.contains { $0.contains("new profile") }, "\(screen)")
    // Known people hear nothing.
    screen = try atTerminal(forum, profile: "bob", ["list"])
    #expect(!screen.contains { $0.contains("new profile") }, "\(screen)")
    // In Japanese.
    screen = try atTerminal(forum, profile: "aliec", ["list"], lang: "ja_JP.UTF-8")
    #expect(
      screen.filter { $0 == "forum: この掲示板では新しいプロファイル \"aliec\" です" }.count == 1,
      "\(screen)")
    // At the prompt too, before the banner.
    let tmux = try TmuxSession(forum: forum, profile: "alicia", arguments: ["--no-pager"])
    defer { stop(tmux) }
    screen = try tmux.waitForPrompt("forum>")
    #expect(
      screen.filter { $0 == "forum: new profile \"alicia\" on this board" }.count == 1, "\(screen)")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)

    // A script hears nothing: it named what it meant.
    let piped = try forum.run(["list"], profile: "alcia")
    #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.summary)")
  }

  @Test func aNewBoardFileIsSaidOnce() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "on the real board"])
    let typo = forum.root + "/bord.sqlite"
    var screen = try atTerminal(forum, profile: "alice", ["list"], database: typo)
    let note = "forum: new board \(typo) (there was no file there)"
    #expect(screen.filter { $0 == note }.count == 1, "\(screen)")
    #expect(!screen.contains { $0.contains("new profile") }, "one line: \(screen)")
    screen = try atTerminal(forum, profile: "alice", ["list"], database: typo)
    #expect(!screen.contains { $0.contains("new board") }, "\(screen)")
    // The real board: nothing to say.
    screen = try atTerminal(forum, profile: "alice", ["list"])
    #expect(!screen.contains { $0.hasPrefix("forum: new") }, "\(screen)")

    let japanese = forum.root + "/ita.sqlite"
    screen = try atTerminal(
      forum, profile: "alice", ["list"], database: japanese, lang: "ja_JP.UTF-8")
    #expect(
      screen.contains("forum: 新しい掲示板 \(japanese) を作りました (そこにファイルはありませんでした)"),
      "\(screen)")
  }
}
