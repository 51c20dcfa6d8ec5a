import Foundation
import HTTPTestSupport
import Testing

/// Two members at real prompts (tmux), each through a `forum serve` of their own
/// (`forum --db https://127.0.0.1:PORT/`, the throwaway authority trusted by `FORUM_CA_FILE`),
/// both servers over one PostgreSQL board: what one posts reaches the other's screen, the
/// other's half-typed line kept; the watcher's server goes away and comes back. Without tmux
/// the test fails rather than skips (`Scripts/setup` installs it).
@Suite("two servers, one board, two prompts (tmux)")
struct RemoteTerminalTests {
  private func trimmed(_ line: String) -> String { line.trimmingCharacters(in: .whitespaces) }

  @Test func aPostThroughOneServerReachesAPromptOnTheOther() throws {
    // Each member has a fixture of their own: their own profiles and their own tmux server.
    let forum = try ForumFixture()
    let watcherForum = try ForumFixture()
    let board = try ServedPostgresBoard(forum)
    defer { board.board.remove() }
    let authority = try ThrowawayAuthority(in: forum.root)
    let tls = ["--tls-cert", authority.certificateFile, "--tls-key", authority.keyFile]
    let first = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"] + tls, database: board.server.uri)
    defer { _ = first.stop() }
    var second = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"] + tls, database: board.server.uri)
    defer { _ = second.stop() }
    let trust = ["FORUM_CA_FILE": authority.authorityFile]
    let firstURL = "https://127.0.0.1:\(first.port)/"
    let secondURL = "https://127.0.0.1:\(second.port)/"

    let made = try forum.run(
      ["new", "--title", "Planning"], environment: trust, database: firstURL)
    #expect(made.status == 0, "\(made.summary)")
    let bob = try TmuxSession(
      forum: watcherForum, profile: "bob", environment: trust, arguments: ["--no-pager"],
      database: secondURL)
    defer { _ = try? bob.run(["kill-server"]) }
    let alice = try TmuxSession(
      forum: forum, profile: "alice", environment: trust, arguments: ["--no-pager"],
      database: firstURL)
    defer { _ = try? alice.run(["kill-server"]) }
    try bob.waitForPrompt("forum>")
    try bob.enter("show 1")
    try bob.waitForPrompt("forum #1>")
    try bob.type("half typed")
    try alice.waitForPrompt("forum>")

    // A comment in the thread Bob has open, then a new thread, typed at Alice's prompt.
    try alice.enter("comment 1 from the first server")
    try bob.wait("the comment") { lines in
      lines.contains { trimmed($0) == "from the first server" }
        && lines.last == "forum #1> half typed"
    }
    try alice.enter("new --title Wired --description afar")
    try alice.waitForPrompt("Image path (Enter for none):")
    try alice.press("Enter")
    var screen = try bob.wait("the new thread") { lines in
      lines.contains { $0.contains("New thread #2") && $0.contains("Wired") }
        && lines.last == "forum #1> half typed"
    }
    #expect(screen.count { trimmed($0) == "from the first server" } == 1, "\(screen)")
    #expect(screen.count { $0.contains("New thread #2") } == 1, "\(screen)")

    // Bob's server goes away: said once, the half-typed line kept. What Alice posts meanwhile
    // comes when a server is back on the same address, after one line saying so.
    let port = second.port
    #expect(second.stop() == 0)
    screen = try bob.wait("the server away") { lines in
      lines.contains { $0.contains("live updates failed") }
        && lines.last == "forum #1> half typed"
    }
    try alice.enter("comment 1 while it was away")
    // Long enough for the feed's thread to find the server away again (it asks every 2 s).
    sleep(5)
    screen = try bob.screen()
    #expect(screen.count { $0.contains("live updates failed") } == 1, "said once: \(screen)")
    #expect(!screen.contains { trimmed($0) == "while it was away" }, "\(screen)")
    second = try ServeProcess(
      forum, ["--listen", "127.0.0.1:\(port)"] + tls, database: board.server.uri)
    screen = try bob.wait("the comment made while away") { lines in
      lines.contains { trimmed($0) == "while it was away" }
        && lines.last == "forum #1> half typed"
    }
    try alice.enter("comment 1 after it came back")
    screen = try bob.wait("the comment after") { lines in
      lines.contains { trimmed($0) == "after it came back" }
        && lines.last == "forum #1> half typed"
    }
    for said in [
      "live updates failed", "live updates resumed", "from the first server", "while it was away",
      "after it came back", "New thread #2",
    ] {
      #expect(screen.count { $0.contains(said) } == 1, "«\(said)» once: \(screen)")
    }
    let resumed = try #require(screen.firstIndex { $0.contains("live updates resumed") })
    let away = try #require(screen.firstIndex { trimmed($0) == "while it was away" })
    #expect(resumed < away, "resumed, then what came meanwhile: \(screen)")

    try bob.press("C-u")
    try bob.enter("quit")
    #expect(try bob.waitForExit() == 0)
    try alice.enter("quit")
    #expect(try alice.waitForExit() == 0)
  }
}
