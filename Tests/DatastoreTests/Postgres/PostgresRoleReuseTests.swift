import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// A board user belongs to one PostgreSQL role, not to a role name: when the owner drops a
/// member's role and later creates a role of the same name (for someone else), the new role
/// starts as a new user and cannot act as the old one.
@Suite("PostgreSQL role reuse")
struct PostgresRoleReuseTests {
  @Test("a role dropped and created again under the same name is a new user")
  func recreatedRoleIsANewUser() throws {
    let board = try installedBoard()
    defer { board.remove() }
    let alice = board["alice"]
    let first = try #require(
      try PostgresConnection(uri: alice.uri).query("SELECT forum.sign_in()").text(0, 0))
    _ = try board.cluster.admin("DROP ROLE \(alice.name)")
    _ = try board.cluster.admin(
      "CREATE ROLE \(alice.name) LOGIN PASSWORD '\(alice.password)' IN ROLE forum_member")
    let again = try PostgresConnection(uri: alice.uri)
    let second = try #require(try again.query("SELECT forum.sign_in()").text(0, 0))
    #expect(second != first, "the new role took over the dropped role's user")
    let seen = try again.query("SELECT forum.caller_id(), forum.principals()::text")
    #expect(seen.text(0, 0) == second)
    #expect(seen.text(0, 1)?.contains(first) == false, "\(seen.text(0, 1) ?? "")")
  }
}
