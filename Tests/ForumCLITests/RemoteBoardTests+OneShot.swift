import Foundation
import Testing

/// A one-shot over https asks the server what the command needs and no separate session check:
/// the profile keeps what `GET forum/session` answered for its session, and the first request
/// carries that answer's tag, which the server compares with the session's answer now.
extension RemoteBoardTests {
  /// Each one-shot's requests, counted once the profile holds its session's answer: the
  /// session is not asked for on its own (`forum/session`), whatever the command.
  @Test func aOneShotAsksNoSessionCheckOfItsOwn() throws {
    let (_, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "long", "--description", "x"])
    for index in 1...3 { try served.ok(["comment", "1", "c\(index)"], profile: "bob") }
    try served.ok(["new", "--title", "short", "--description", "y"])
    let counts: [(arguments: [String], requests: Int)] = [
      (["list"], RemoteBoardTests.listRequests),
      (["--json", "list"], RemoteBoardTests.listRequests),
      // The thread with its read position, its comments, the read mark moved past bob's.
      (["show", "1"], 3),
      (["show", "2"], 2),
      (["comment", "2", "counted"], 1),
      // A new name: the answer kept for the next command has it, which the next does not pay.
      (["name", "Alice B"], 1),
      (["list"], RemoteBoardTests.listRequests),
    ]
    for (arguments, expected) in counts {
      let (run, asked) = try requests(served, arguments)
      #expect(run.status == 0, "\(arguments): \(run.summary)")
      #expect(!asked.contains { $0.contains("forum/session") }, "\(arguments): \(asked)")
      #expect(asked.count == expected, "\(arguments): \(asked)")
    }
    #expect(served.server.stop() == 0)
  }

  /// A script's commands read the roles again each (a role granted meanwhile counts from the
  /// next command on) by the tag their first request carries, not by a request of their own.
  @Test func aScriptsCommandsAskNoSessionCheckEither() throws {
    let (forum, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "scripted", "--description", "x"])
    let script = (1...3).map { "comment 1 line\($0)\n" }.joined()
    let log = forum.root + "/script-requests.log"
    let run = try served.run(
      [], input: Data(script.utf8),
      environment: [
        "FORUM_CA_FILE": served.authority.authorityFile, "FORUM_TEST_REQUEST_LOG": log,
      ])
    #expect(run.status == 0, "\(run.summary)")
    let asked = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
    #expect(asked.count == 3 && asked.allSatisfy { $0.contains("forum/perform") }, "\(asked)")
    #expect(served.server.stop() == 0)
  }

  /// Roles changed between two one-shots are seen by the next: made a moderator, then not.
  @Test func aRoleChangedBetweenOneShotsIsSeenByTheNext() throws {
    let (_, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "owned", "--description", "x"])
    let bob = try served.handle("bob")
    func bobIsModerator() throws -> Bool? {
      let who = try served.ok(["--json", "who"], profile: "bob").json()
      let results = who["results"] as? [[String: Any]] ?? []
      let mine = results.first { "@" + ($0["userName"] as? String ?? "") == bob }
      return mine?["moderator"] as? Bool
    }
    #expect(try bobIsModerator() == false)
    try served.ok(["mod", "add", bob])
    // The kept answer's tag is refused (412, nothing done), the answer asked for, the
    // request sent again.
    let (who, asked) = try requests(served, ["--json", "who"], profile: "bob")
    #expect(who.status == 0, "\(who.summary)")
    #expect(asked.filter { $0.hasSuffix(" 412") }.count == 1, "\(asked)")
    #expect(asked.filter { $0.contains("forum/session") }.count == 1, "\(asked)")
    #expect(try bobIsModerator() == true)
    try served.ok(["mod", "remove", bob])
    #expect(try bobIsModerator() == false)
    // A name changed after the kept answer is what the next one-shot's whoami says.
    try served.ok(["name", "Robert"], profile: "bob")
    #expect(
      try served.ok(["--json", "whoami"], profile: "bob").json().string("displayName") == "Robert")
    #expect(served.server.stop() == 0)
  }

  /// A session that ended while the profile kept its answer: the first request is refused
  /// (E401001), the member signs in again once with the profile's secret (the same member), and
  /// the request is sent again; the next one-shot asks as few as ever.
  @Test func anEndedKeptSessionIsReplacedOnceByTheFirstRequest() throws {
    try staleSessionIsReplacedOnce(answerKeptForIt: true)
  }
}

extension RemoteBoardTests {
  /// The page's unread counts come with the page (`unreadUpTo`) and are never an answer the
  /// server kept for the reader: a thread read counts 0 at the next list (read positions are no
  /// write to the class), a new comment 1 again.
  @Test func theUnreadCountsWithAPageAreNeverAKeptAnswer() throws {
    let (_, served) = try Served.onNewBoard()
    try served.ok(["new", "--title", "followed", "--description", "x"], profile: "bob")
    for index in 1...2 { try served.ok(["comment", "1", "c\(index)"], profile: "bob") }
    func unread() throws -> Int? {
      let results = try served.ok(["--json", "list"]).json()["results"] as? [[String: Any]]
      return results?.first?["unread"] as? Int
    }
    #expect(try unread() == 3)
    #expect(try unread() == 3)
    try served.ok(["show", "1"])
    #expect(try unread() == 0)
    try served.ok(["comment", "1", "c3"], profile: "bob")
    #expect(try unread() == 1)
    #expect(served.server.stop() == 0)
  }
}
