import Foundation
import PostgresTestCluster
import Testing

/// `dm` and `inbox` through the built binary, on SQLite and on PostgreSQL (each person their own
/// role), and a third person who must find no trace of a conversation anywhere.
@Suite("Direct messages from the command line")
struct DirectMessageTests {
  /// A board on one engine with alice, bob and carol: where each connects.
  final class People {
    let forum: ForumFixture
    private let locations: [String: String]
    private let board: PostgresTestBoard?

    init(postgres: Bool) throws {
      forum = try ForumFixture()
      guard postgres else {
        locations = [:]
        board = nil
        return
      }
      let board = try PostgresTestCluster.shared().board(members: ["alice", "bob", "carol"])
      self.board = board
      let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
      guard initialized.status == 0 else { throw ForumTestError(initialized.summary) }
      var locations: [String: String] = [:]
      for member in ["alice", "bob", "carol"] {
        try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
        locations[member] = board[member].uri
      }
      self.locations = locations
    }

    deinit { board?.remove() }

    @discardableResult
    func run(_ person: String, _ arguments: [String], input: String = "") throws -> RunResult {
      try forum.run(
        arguments, profile: person, input: Data(input.utf8), database: locations[person])
    }

    func handle(_ person: String) throws -> String {
      let me = try run(person, ["--json", "whoami"])
      guard let name = try me.json().string("userName") else { throw ForumTestError(me.summary) }
      return "@" + name
    }
  }

  @Test(
    "a third person sees no conversation in any listing, number, show or JSON",
    arguments: [false, true])
  func thirdPersonSeesNothing(postgres: Bool) throws {
    let people = try People(postgres: postgres)
    let (alice, bob) = (try people.handle("alice"), try people.handle("bob"))
    _ = try people.handle("carol")
    #expect(try people.run("alice", ["new", "--title", "first public"]).status == 0)
    for (from, to) in [("alice", bob), ("bob", alice), ("alice", bob)] {
      let sent = try people.run(from, ["dm", to, "whisper-\(from)-SECRET"])
      #expect(sent.status == 0, "\(sent.summary)")
    }
    #expect(try people.run("alice", ["new", "--title", "second public"]).status == 0)

    var seen: [RunResult] = []
    let listing = try people.run("carol", ["--json", "list"])
    #expect(numbers(try listing.json().objects("results")) == [2, 1], "no gap in public numbers")
    seen.append(listing)
    seen.append(try people.run("carol", ["list"]))
    seen.append(try people.run("carol", ["list", "--page", "last"]))
    for number in 1...5 {
      seen.append(try people.run("carol", ["show", String(number)]))
      seen.append(try people.run("carol", ["--json", "show", String(number)]))
    }
    #expect(seen.last?.status == 4, "thread #5 does not exist")
    seen.append(try people.run("carol", ["inbox"]))
    let inbox = try people.run("carol", ["--json", "inbox"])
    #expect(try inbox.json().objects("results").isEmpty)
    seen.append(inbox)
    for partner in [alice, bob] {
      seen.append(try people.run("carol", ["dm", partner]))
      seen.append(try people.run("carol", ["--json", "dm", partner]))
      seen.append(try people.run("carol", ["dm", partner, "--page", "1"]))
    }
    for result in seen {
      #expect(
        !result.stdout.contains("SECRET") && !result.stderr.contains("SECRET"), "\(result.summary)")
    }
    // The two of them see it, newest first in the inbox.
    let bobsInbox = try people.run("bob", ["--json", "inbox"]).json().objects("results")
    #expect(bobsInbox.count == 1)
    #expect(bobsInbox.first?.object("lastMessage")?.string("text") == "whisper-alice-SECRET")
    #expect(bobsInbox.first?.object("partner")?.string("userName") == String(alice.dropFirst()))
    let shown = try people.run("bob", ["--json", "dm", alice]).json()
    #expect(
      shown.objects("results").compactMap { $0.string("text") } == [
        "whisper-alice-SECRET", "whisper-bob-SECRET", "whisper-alice-SECRET",
      ])
  }

  @Test(
    "dm: text byte for byte, unknown handle 4, yourself 2, too long refused", arguments: [false])
  func badInput(postgres: Bool) throws {
    let people = try People(postgres: postgres)
    let bob = try people.handle("bob")
    let me = try people.handle("alice")
    #expect(try people.run("alice", ["whoami"]).stdout.contains(me), "whoami shows the handle")
    // Inner spacing, quotes and backslashes are kept; the ends are trimmed as for a comment.
    let text = #"it's "quoted"   \n back\slash"#
    let sent = try people.run("alice", ["--json", "dm", bob, text])
    #expect(sent.status == 0, "\(sent.summary)")
    #expect(try sent.json().string("text") == text)
    let nobody = try people.run("alice", ["dm", "@nobody", "hi"])
    #expect(nobody.status == 4, "\(nobody.summary)")
    #expect(nobody.stderrLines.count == 1)
    let hostile = try people.run("alice", ["dm", "@\u{1b}[2J\u{202e}evil", "hi"])
    #expect(hostile.status == 4, "\(hostile.summary)")
    expectHarmless(hostile)
    let yourself = try people.run("alice", ["dm", me, "hi me"])
    #expect(yourself.status == 2, "\(yourself.summary)")
    #expect(yourself.stderrLines.count == 1)
    let long = try people.run("alice", ["dm", bob, String(repeating: "x", count: 10_001)])
    #expect(long.status == 1, "\(long.summary)")
    #expect(
      try people.run("alice", ["--json", "dm", bob]).json().int("count") == 1, "nothing more")
    // A script: a refused dm's draft lines never run as commands.
    let script = try people.run(
      "alice", [],
      input: "dm @nobody --write\nname Mallory\n.\ndm \(bob) --write\nline one\nline two\n.\n")
    #expect(script.status != 0)
    #expect(
      try people.run("alice", ["--json", "whoami"]).json().string("displayName") != "Mallory")
    let last = try people.run("bob", ["--json", "inbox"]).json().objects("results").first
    #expect(last?.object("lastMessage")?.string("text") == "line one\nline two")
  }
}
