import Foundation
import PostgresTestCluster
import Testing

/// How people reach a PostgreSQL board: peer authentication on the local socket maps the Unix
/// user to the role of the same name; SCRAM passwords over TCP on loopback.
@Suite("PostgreSQL authentication")
struct PostgresAuthenticationTests {
  @Test("SCRAM over TCP: the right password gets in")
  func scramOverTCP() throws {
    let forum = try ForumFixture()
    let cluster = try PostgresTestCluster.shared()
    let board = try cluster.board(members: ["alice"])
    defer { board.remove() }
    #expect(try forum.run(["init"], profile: nil, database: board.owner.uri).status == 0)
    try cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let tcp = cluster.uri(
      database: board.database, role: board["alice"].name, password: board["alice"].password,
      tcp: true)
    let posted = try forum.run(["new", "--title", "over tcp"], profile: "alice", database: tcp)
    #expect(posted.status == 0, "\(posted.summary)")
    let whoami = try forum.run(["whoami"], profile: "alice", database: tcp)
    #expect(!whoami.stdout.contains(board["alice"].password), "the password is never shown")
  }

  /// Two Unix users made for the test (the suite runs as root, as CI does) and removed after.
  @Test("peer authentication: two Unix users are two people; neither can be the other")
  func peerAuthentication() throws {
    guard getuid() == 0 else {
      Issue.record("peer authentication needs two Unix users; run the tests as root to make them")
      return
    }
    // The other users run a copy anyone may execute: the build may sit where they cannot
    // enter (a clone under /root, as on a fresh machine run as root).
    let built = try ForumBinary.require()
    var template = Array((NSTemporaryDirectory() + "/forum-peer.XXXXXX").utf8CString)
    let shared = String(cString: try #require(mkdtemp(&template)))
    defer { try? FileManager.default.removeItem(atPath: shared) }
    chmod(shared, 0o755)
    let binary = shared + "/forum"
    try FileManager.default.copyItem(atPath: built, toPath: binary)
    chmod(binary, 0o755)
    let cluster = try PostgresTestCluster.shared()
    let socket = try #require(cluster.socketDirectory, "the test cluster has a local socket")
    let board = try cluster.board(members: [])
    defer { board.remove() }
    let forum = try ForumFixture()
    #expect(try forum.run(["init"], profile: nil, database: board.owner.uri).status == 0)
    let users = ["fpeer\(getpid() % 100_000)a", "fpeer\(getpid() % 100_000)b"]
    defer {
      for user in users {
        _ = try? PostgresTestCluster.run("/usr/sbin/userdel", ["-r", user])
        _ = try? cluster.admin("DROP OWNED BY \(user) CASCADE; DROP ROLE IF EXISTS \(user)")
      }
    }
    for user in users {
      _ = try? PostgresTestCluster.run("/usr/sbin/userdel", ["-r", user])
      try PostgresTestCluster.run(
        "/usr/sbin/useradd", ["--create-home", "--shell", "/bin/sh", user])
      try cluster.admin(
        "CREATE ROLE \(user) LOGIN IN ROLE forum_member, \(PostgresTestCluster.peerGroup)")
    }
    // No user name and no password: the server takes the Unix user's name.
    let uri = "postgresql:///\(board.database)?host=\(socket)&port=\(cluster.port)"
    func forumAs(_ user: String, _ arguments: [String], uri: String = uri) throws -> RunResult {
      let home = "/home/\(user)"
      return try ForumFixture.launch(
        "/usr/sbin/runuser",
        arguments: [
          "-u", user, "--", "/usr/bin/env", "HOME=\(home)", "LANG=C", binary, "--db", uri,
        ]
          + arguments,
        environment: ["PATH": "/usr/bin:/bin"], input: Data(), timeout: 120, directory: "/")
    }
    let posted = try forumAs(users[0], ["new", "--title", "from the first user"])
    #expect(posted.status == 0, "\(posted.summary)")
    let commented = try forumAs(users[1], ["comment", "1", "from the second user"])
    #expect(commented.status == 0, "\(commented.summary)")
    let refused = try forumAs(users[1], ["delete", "1", "--yes"])
    #expect(refused.status == 3, "\(refused.summary)")
    // The second Unix user asking for the first one's role is refused by the server.
    let impersonation = try forumAs(users[1], ["list"], uri: uri + "&user=\(users[0])")
    #expect(impersonation.status == 3, "\(impersonation.summary)")
    #expect(impersonation.stderrLines.count == 1, "\(impersonation.summary)")
    let shown = try forumAs(users[0], ["show", "1"])
    #expect(shown.status == 0, "\(shown.summary)")
    #expect(shown.stdout.contains("from the second user"), "\(shown.summary)")
  }
}
