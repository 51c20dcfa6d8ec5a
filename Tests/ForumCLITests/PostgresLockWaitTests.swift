import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// A write on a PostgreSQL board that waits for another member's transaction behaves as on
/// SQLite (issue 22 item 4): it says so after a second, Ctrl-C stops it, and what is printed is
/// true.
@Suite(
  "PostgreSQL lock waits at the prompt (tmux)")
struct PostgresLockWaitTests {
  @Test("a comment behind Bob's open transaction says it waits, Ctrl-C stops it, nothing saved")
  func aLockWaitSaysSoAndCtrlCStopsIt() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    try forum.run(["init"], profile: nil, database: board.owner.uri)
    for member in ["alice", "bob"] {
      try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
    }
    let alice = board["alice"].uri
    let posted = try forum.run(["new", "--title", "busy"], profile: "alice", database: alice)
    #expect(posted.status == 0, "\(posted.summary)")
    // Bob comments on the thread in a transaction he leaves open: the thread's row is his
    // until he ends it.
    let bob = try PostgresConnection(uri: board["bob"].uri)
    let bobId = try #require(try bob.query("SELECT forum.sign_in()").text(0, 0))
    let thread = try #require(
      try bob.query("SELECT object_id FROM forum.objects WHERE class = 'Thread'").text(0, 0))
    try bob.execute("BEGIN")
    try bob.query(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES ('Comment', $1, '{}', $2, $3::jsonb)
      """,
      [
        .text(Validation.randomId()), .text("{\(bobId)}"),
        .text(
          #"{"text":"slow","thread":{"__type":"Pointer","className":"Thread","objectId":"\#(thread)"}}"#
        ),
      ])

    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["--db", alice])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 1 while locked")
    try tmux.wait("the waiting notice") {
      $0.contains("waiting for another writer… Ctrl-C to stop")
    }
    try tmux.press("C-c")
    try tmux.wait("interrupted") { $0.contains("Interrupted; nothing was saved.") }
    try tmux.waitForPrompt("forum>")
    #expect(try !tmux.screen().joined().contains("Posted"), "a post was announced")
    try bob.execute("ROLLBACK")
    let owner = try PostgresConnection(uri: board.owner.uri)
    #expect(
      try owner.query("SELECT count(*) FROM forum.objects WHERE class = 'Comment'").int(0, 0) == 0,
      "the interrupted comment was saved")

    // Once the lock is gone, the same command goes through, with the number Bob gave back.
    try tmux.enter("comment 1 after the lock")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
