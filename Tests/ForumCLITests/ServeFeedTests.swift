import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Spawning
import Testing

/// The change feed over the network (`GET forum/changes?wait=`, `GET forum/feed`) through the
/// built `forum serve`, on SQLite and on PostgreSQL, driven by `Fixtures/feed/feed-client.py`
/// (the system Python, NCMB's signature made there): long-polls woken by another user's post,
/// the ACL (a private object's change reaches nobody else, not even its id), waits bounded per
/// user, honest reads answered while many wait, a hung-up client's place given back, SIGTERM
/// answering every wait, a gap after pruning said, events live and resumed from Last-Event-ID.
@Suite("forum serve: the change feed", .serialized)
struct ServeFeedTests {
  enum Engine: String, CustomStringConvertible, CaseIterable {
    case sqlite, postgres
    var description: String { rawValue }
  }

  static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/feed/feed-client.py").path

  /// A board on `engine` served by `forum serve`, its keys, and how to prune its feed by hand.
  final class Served {
    let forum: ForumFixture
    let server: ServeProcess
    let keys: String
    /// What `--db` names for the server.
    let database: String
    private let postgres: PostgresTestBoard?

    init(_ engine: Engine) throws {
      forum = try ForumFixture()
      switch engine {
      case .sqlite:
        try forum.ok(["init"], profile: nil)
        let keys = try forum.run(["--json", "keys"], profile: nil)
        #expect(keys.status == 0, "\(keys.summary)")
        self.keys = keys.stdout
        postgres = nil
        database = forum.db
        server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"])
      case .postgres:
        let board = try PostgresTestCluster.shared().board(members: [])
        postgres = board
        let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
        #expect(initialized.status == 0, "\(initialized.summary)")
        let role = try board.cluster.role("server", database: board.database)
        try board.cluster.admin("GRANT forum_member, forum_server TO \(role.name)")
        let keys = try forum.run(["--json", "keys"], profile: nil, database: board.owner.uri)
        #expect(keys.status == 0, "\(keys.summary)")
        self.keys = keys.stdout
        database = role.uri
        server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: role.uri)
      }
    }

    deinit {
      _ = server.stop(SIGKILL)
      postgres?.remove()
    }

    /// What the feed's window leaves after pruning through `sequence` (as the engine's own
    /// prune does, by its owner's hand: 50,000 changes would be made otherwise).
    func prune(through sequence: Int64) throws {
      if let postgres {
        _ = try postgres.cluster.admin(
          """
          UPDATE forum.changes_pruned SET through = \(sequence) WHERE id = 1;
          DELETE FROM forum.changes WHERE seq <= \(sequence);
          DELETE FROM forum.private_changes WHERE seq <= \(sequence);
          """, database: postgres.database)
      } else {
        let run = try Clients.run(
          "/usr/bin/sqlite3",
          [
            forum.db,
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('changesPrunedThrough', '\(sequence)');"
              + " DELETE FROM changes WHERE seq <= \(sequence);",
          ])
        #expect(run.status == 0, "\(run.summary)")
      }
    }

    /// Another `forum serve` on the same board: its own process and connections.
    func secondServer() throws -> ServeProcess {
      try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: database)
    }

    func drive(_ scenario: String, state: String? = nil, ports: String? = nil) throws
      -> ClientRun
    {
      try Clients.run(
        "/usr/bin/python3",
        [ServeFeedTests.client, ports ?? String(server.port), keys, scenario]
          + (state.map { [$0] } ?? []),
        timeout: 180)
    }
  }

  @Test(
    "a long-poll is woken by another user's post; a private one reaches nobody else",
    arguments: Engine.allCases)
  func longPollWokenThroughTheACL(engine: Engine) throws {
    let served = try Served(engine)
    let run = try served.drive("wake")
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(served.server.stop(SIGTERM) == 0)
    #expect(served.server.stderr == "", "\(served.server.stderr)")
  }

  @Test(
    "a wait is woken by a post through another server: the engine's own wake-up",
    arguments: Engine.allCases)
  func longPollWokenByAnotherProcess(engine: Engine) throws {
    let served = try Served(engine)
    let other = try served.secondServer()
    let run = try served.drive("wake-elsewhere", ports: "\(served.server.port),\(other.port)")
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(other.stop(SIGTERM) == 0)
    #expect(served.server.stop(SIGTERM) == 0)
  }

  @Test(
    "waits are bounded per user, honest reads go on, a hang-up frees its place",
    arguments: Engine.allCases)
  func waitsBoundedAndHonestReadsAnswered(engine: Engine) throws {
    let served = try Served(engine)
    let run = try served.drive("limits")
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(served.server.stop(SIGTERM) == 0)
  }

  @Test("SIGTERM answers every wait and ends every stream", arguments: Engine.allCases)
  func sigtermAnswersWaits(engine: Engine) throws {
    let served = try Served(engine)
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [
      ServeFeedTests.client, String(served.server.port), served.keys, "stop-wait",
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let first = output.fileHandleForReading.firstLine()
    #expect(first.hasPrefix("waiting"), "\(first)")
    #expect(served.server.stop(SIGTERM, timeout: 60) == 0)
    let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let problems =
      first.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
      .joined(separator: "\n") + rest
    #expect(problems == "[]\n", "\(problems)")
  }

  @Test("a gap after pruning is said, by changes and by the stream", arguments: Engine.allCases)
  func gapAfterPruningIsSaid(engine: Engine) throws {
    let served = try Served(engine)
    let setup = try served.drive("gap-setup")
    #expect(setup.status == 0, "\(setup.summary)")
    let state =
      try JSONSerialization.jsonObject(with: Data(setup.stdout.utf8)) as? [String: Any] ?? [:]
    let start = try #require((state["start"] as? NSNumber)?.int64Value, "\(setup.summary)")
    // The first two of its three posts pruned: the reader at `start` missed something.
    try served.prune(through: start + 2)
    let check = try served.drive("gap-check", state: setup.stdout)
    #expect(check.status == 0 && check.stdout == "[]\n", "\(check.summary)")
  }

  @Test(
    "the event stream delivers live, through the ACL, and resumes from Last-Event-ID",
    arguments: Engine.allCases)
  func streamLiveAndResumed(engine: Engine) throws {
    let served = try Served(engine)
    let run = try served.drive("stream")
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(served.server.stop(SIGTERM) == 0)
    #expect(served.server.stderr == "", "\(served.server.stderr)")
  }
}
