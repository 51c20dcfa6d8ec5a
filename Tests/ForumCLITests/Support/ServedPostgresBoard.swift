import PostgresTestCluster
import Testing

/// A PostgreSQL board as `forum serve` is given one: `forum init` by its owner, a server role
/// granted `forum_member` and `forum_server`, and the board's keys as `forum --json keys`
/// prints them. The caller removes it: `defer { served.board.remove() }`.
struct ServedPostgresBoard {
  let board: PostgresTestBoard
  let server: PostgresTestRole
  let keys: String

  init(_ forum: ForumFixture) throws {
    let board = try PostgresTestCluster.shared().board(members: ["alice"])
    do {
      let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
      #expect(initialized.status == 0, "\(initialized.summary)")
      server = try board.cluster.role("server", database: board.database)
      try board.cluster.admin("GRANT forum_member, forum_server TO \(server.name)")
      let keys = try forum.run(["--json", "keys"], profile: nil, database: board.owner.uri)
      #expect(keys.status == 0, "\(keys.summary)")
      self.keys = keys.stdout
      self.board = board
    } catch {
      board.remove()
      throw error
    }
  }
}
