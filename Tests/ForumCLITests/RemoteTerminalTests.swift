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
    let servers = try TwoServers()
    defer { servers.stop() }
    let (forum, watcherForum, trust) = (servers.forum, servers.watcherForum, servers.trust)
    let (firstURL, secondURL) = (servers.firstURL, servers.secondURL)

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
    let port = servers.second.port
    #expect(servers.second.stop() == 0)
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
    servers.second = try servers.serve(at: port)
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

  /// Every kind of change one member makes through the first server, told at the other's
  /// prompt through the second: an edit of a comment and of the thread, a deletion, a live
  /// reply quoted, a reply and a mention elsewhere, a direct message, a burst as a gap, the
  /// feed's window passed while the server was away, the thread deleted under the watcher.
  /// Each said exactly once, the half-typed line kept.
  @Test func everyKindOfChangeReachesAPromptOnTheOtherOnce() throws {
    let servers = try TwoServers()
    defer { servers.stop() }
    let (forum, watcherForum, board, trust) =
      (servers.forum, servers.watcherForum, servers.board, servers.trust)
    let (firstURL, secondURL) = (servers.firstURL, servers.secondURL)
    /// Alice's one-shot commands (or a piped script) through the first server.
    func alice(_ arguments: [String], script lines: [String] = []) throws {
      let input = Data(lines.map { $0 + "\n" }.joined().utf8)
      let result = try forum.run(
        arguments, input: input, environment: trust, database: firstURL)
      #expect(result.status == 0, "\(arguments): \(result.summary)")
    }
    /// Bob's, through the second.
    func bobSays(_ arguments: [String]) throws -> RunResult {
      let result = try watcherForum.run(
        arguments, profile: "bob", environment: trust, database: secondURL)
      #expect(result.status == 0, "\(arguments): \(result.summary)")
      return result
    }

    try alice(["name", "Alice"])
    _ = try bobSays(["name", "Bob"])
    let bobHandle = try #require(try bobSays(["--json", "whoami"]).json().string("userName"))
    let aliceHandle = try #require(
      try forum.run(["--json", "whoami"], environment: trust, database: firstURL).json()
        .string("userName"))
    try alice(["new", "--title", "Planning"])
    try alice(["comment", "1", "first draft"])
    try alice(["comment", "1", "soon gone"])
    _ = try bobSays(["comment", "1", "bob asks"])
    try alice(["new", "--title", "Elsewhere"])
    _ = try bobSays(["comment", "2", "bob elsewhere"])

    let bob = try TmuxSession(
      forum: watcherForum, profile: "bob", environment: trust, arguments: ["--no-pager"],
      database: secondURL)
    defer { _ = try? bob.run(["kill-server"]) }
    try bob.waitForPrompt("forum>")
    try bob.enter("show 1")
    try bob.waitForPrompt("forum #1>")
    try bob.type("half typed")
    /// Waits until `shown` holds of Bob's screen with his half-typed line last.
    @discardableResult
    func bobSees(
      _ what: String, prompt: String = "forum #1> half typed",
      sourceLocation: SourceLocation = #_sourceLocation, _ shown: @escaping ([String]) -> Bool
    ) throws -> [String] {
      try bob.wait(what, sourceLocation: sourceLocation) { lines in
        shown(lines) && lines.last == prompt
      }
    }

    // An edit of a comment on screen, then of the thread's title.
    try alice(["edit", "1/1", "second draft"])
    try bobSees("the comment's edit") { lines in
      lines.contains { $0.contains("Comment 1/1 was edited:") }
        && lines.contains { trimmed($0) == "second draft" }
    }
    try alice(["edit", "1", "--title", "Planning, revised"])
    try bobSees("the thread's edit") { lines in
      lines.contains { $0.contains("Thread #1 was edited: \"Planning, revised\"") }
    }
    // A deletion, and a reply in the thread quoting what it answers.
    try alice(["delete", "1/2", "--yes"])
    try bobSees("the deletion") { lines in
      lines.contains { $0.contains("Comment 1/2 was deleted.") }
    }
    try alice(["reply", "1/3", "an answer here"])
    try bobSees("the live reply") { lines in
      lines.contains { trimmed($0) == "an answer here" }
        && lines.contains { $0.contains("> 3 Bob: bob asks") }
    }
    // Elsewhere on the board: a reply to Bob's comment and his @handle; then a message.
    try alice(["reply", "2/1", "answered elsewhere"])
    try bobSees("the reply notice") { lines in
      lines.contains { $0.contains("replied to your 2/1 in #2/2: answered elsewhere") }
    }
    try alice(["comment", "2", "ping @\(bobHandle), look"])
    try bobSees("the mention notice") { lines in
      lines.contains { $0.contains("mentioned you in #2/3: ping @\(bobHandle), look") }
    }
    try alice(["dm", "@" + bobHandle, "hello from alice"])
    var screen = try bobSees("the message") { lines in
      lines.contains {
        $0.contains("✉ Alice @\(aliceHandle): hello from alice — dm @\(aliceHandle)")
      }
    }
    for said in [
      "Comment 1/1 was edited:", "Thread #1 was edited", "Comment 1/2 was deleted.",
      "replied to your 2/1", "mentioned you in #2/3", "hello from alice",
    ] {
      #expect(screen.count { $0.contains(said) } == 1, "«\(said)» once: \(screen)")
    }
    #expect(screen.count { trimmed($0) == "second draft" } == 1, "\(screen)")
    #expect(screen.count { trimmed($0) == "an answer here" } == 1, "\(screen)")
    #expect(!screen.contains { $0.contains("(comment gone)") }, "\(screen)")

    // A burst while Bob writes a comment (no live lines in a draft): back at the prompt, the
    // newest ten and a line for the rest.
    try bob.press("C-u")
    try bob.enter("comment")
    try bob.waitForPrompt(">")
    try alice([], script: (1...26).map { "comment 1 burst \($0)" })
    try bob.press("C-c")
    try bob.waitForPrompt("forum #1>")
    try bob.type("half typed")
    screen = try bobSees("the burst") { lines in
      lines.contains { trimmed($0) == "burst 26" }
    }
    #expect(screen.count { $0.contains("… 16 more since comment 4:") } == 1, "\(screen)")
    for number in 1...26 {
      #expect(
        screen.count { trimmed($0) == "burst \(number)" } == (number > 16 ? 1 : 0),
        "burst \(number): \(screen)")
    }

    // Bob's server away while more happens than the feed keeps (pruned here as the window
    // would, the newest change kept): said once when it goes, and when it is back, a gap said
    // as a gap.
    let port = servers.second.port
    #expect(servers.second.stop() == 0)
    try bobSees("the server away") { lines in
      lines.contains { $0.contains("live updates failed") }
    }
    // Two, so that the pruned mark passes Bob's cursor with the newest change kept.
    try alice(["comment", "1", "pruned away"])
    try alice(["comment", "1", "the newest, kept"])
    _ = try board.board.cluster.admin(
      """
      UPDATE forum.changes_pruned SET through = (SELECT max(seq) - 1 FROM forum.changes);
      DELETE FROM forum.changes WHERE seq < (SELECT max(seq) FROM forum.changes);
      DELETE FROM forum.private_changes
      WHERE seq <= (SELECT through FROM forum.changes_pruned WHERE id = 1);
      """, database: board.board.database)
    servers.second = try servers.serve(at: port)
    try bobSees("the gap") { lines in
      lines.contains { $0.contains("more happened than the live view keeps") }
    }
    try alice(["comment", "1", "after the gap"])
    screen = try bobSees("a comment after the gap") { lines in
      lines.contains { trimmed($0) == "after the gap" }
    }
    for said in [
      "live updates failed", "live updates resumed", "more happened than the live view keeps",
    ] {
      #expect(screen.count { $0.contains(said) } == 1, "«\(said)» once: \(screen)")
    }
    let resumed = try #require(screen.firstIndex { $0.contains("live updates resumed") })
    let gap = try #require(screen.firstIndex { $0.contains("more happened than") })
    #expect(resumed < gap, "resumed, then the gap: \(screen)")
    // What the server kept past the gap comes with the next live comment: once each, after it.
    for posted in ["pruned away", "the newest, kept", "after the gap"] {
      #expect(screen.count { trimmed($0) == posted } == 1, "«\(posted)» once: \(screen)")
      let shown = screen.firstIndex { trimmed($0) == posted }
      #expect(shown.map { $0 > gap } == true, "«\(posted)» after the gap: \(screen)")
    }

    // The thread deleted under Bob: said once, he has left it, his line kept.
    try alice(["delete", "1", "--yes"])
    screen = try bobSees("the thread's deletion", prompt: "forum> half typed") { lines in
      lines.contains { $0.contains("Thread #1 was deleted; you have left it.") }
    }
    #expect(screen.count { $0.contains("Thread #1 was deleted") } == 1, "\(screen)")
    try bob.press("C-u")
    try bob.enter("quit")
    #expect(try bob.waitForExit() == 0)
  }
}

/// Two `forum serve`s over one PostgreSQL board, both over TLS from one throwaway authority, and
/// a fixture for each of two members (their own profiles and their own tmux server): Alice's
/// `forum` goes through the first server, Bob's through the second, which a test may stop and
/// start again on its port.
private final class TwoServers {
  let forum: ForumFixture
  let watcherForum: ForumFixture
  let board: ServedPostgresBoard
  let trust: [String: String]
  let first: ServeProcess
  var second: ServeProcess
  private let tls: [String]

  init() throws {
    forum = try ForumFixture()
    watcherForum = try ForumFixture()
    board = try ServedPostgresBoard(forum)
    let authority = try ThrowawayAuthority(in: forum.root)
    tls = ["--tls-cert", authority.certificateFile, "--tls-key", authority.keyFile]
    trust = ["FORUM_CA_FILE": authority.authorityFile]
    first = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"] + tls, database: board.server.uri)
    second = try ServeProcess(
      forum, ["--listen", "127.0.0.1:0"] + tls, database: board.server.uri)
  }

  /// Stops both servers and removes the board (a test's `defer`, which also keeps this alive
  /// to the test's end).
  func stop() {
    _ = first.stop()
    _ = second.stop()
    board.board.remove()
  }

  var firstURL: String { "https://127.0.0.1:\(first.port)/" }
  var secondURL: String { "https://127.0.0.1:\(second.port)/" }

  /// A server over the same board on `port` (where the second was).
  func serve(at port: Int) throws -> ServeProcess {
    try ServeProcess(forum, ["--listen", "127.0.0.1:\(port)"] + tls, database: board.server.uri)
  }
}
