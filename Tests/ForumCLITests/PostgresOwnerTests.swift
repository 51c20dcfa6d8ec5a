import Foundation
import PostgresTestCluster
import Testing

/// The README's PostgreSQL set-up, followed as written (issue 22 item 10): a `boardowner` role
/// with LOGIN CREATEROLE owning the database, `forum init` by it, members made with
/// `CREATE ROLE … LOGIN IN ROLE forum_member`. The owner, who is not granted forum_member, signs
/// in, says who it is and appoints moderators.
@Suite("PostgreSQL board owner")
struct PostgresOwnerTests {
  @Test("the owner of the README's set-up runs whoami and mod add, and is never a member")
  func ownerAppointsModerators() throws {
    let forum = try ForumFixture()
    let cluster = try PostgresTestCluster.shared()
    // CREATE ROLE boardowner LOGIN CREATEROLE; CREATE DATABASE forum OWNER boardowner;
    let board = try cluster.board(members: [])
    defer { board.remove() }
    try forum.ok(["init"], profile: nil, database: board.owner.uri)
    // CREATE ROLE alice LOGIN IN ROLE forum_member;
    let alice = cluster.uniqueName("alice")
    let password = "correct horse battery staple"
    try cluster.admin("CREATE ROLE \(alice) LOGIN PASSWORD '\(password)' IN ROLE forum_member")
    let aliceURI = cluster.uri(database: board.database, role: alice, password: password)
    try forum.ok(["new", "--title", "hello"], profile: "alice", database: aliceURI)
    let handle =
      "@"
      + (try forum.ok(["--json", "whoami"], profile: "alice", database: aliceURI).json()[
        "userName"] as? String ?? "")

    let whoami = try forum.run(["whoami"], profile: "owner", database: board.owner.uri)
    #expect(whoami.status == 0, "\(whoami.summary)")
    let added = try forum.run(["mod", "add", handle], profile: "owner", database: board.owner.uri)
    #expect(added.status == 0, "\(added.summary)")
    #expect(added.stdout == "\(handle) is now a moderator.\n", "\(added.summary)")
    let listed = try forum.run(["mod", "list"], profile: "owner", database: board.owner.uri)
    #expect(listed.stdout.contains(handle), "\(listed.summary)")
    #expect(
      try cluster.admin(
        "SELECT pg_has_role('\(board.owner.name)', 'forum_member', 'MEMBER')"
      ).contains("f"), "the owner was made a member")
  }
}

extension ForumFixture {
  /// Runs on `database` and expects exit 0.
  @discardableResult
  fileprivate func ok(
    _ arguments: [String], profile: String?, database: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> RunResult {
    let result = try run(arguments, profile: profile, database: database)
    #expect(result.status == 0, "\(result.summary)", sourceLocation: sourceLocation)
    return result
  }
}
