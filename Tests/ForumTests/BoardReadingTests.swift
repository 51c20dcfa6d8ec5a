import EngineTestSupport
import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore
@testable import Forum

/// Expects a `DatastoreError` with `code` from `body`.
private func expectCode(
  _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
  do {
    try body()
    Issue.record("expected \(code.rawValue), nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as DatastoreError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
  } catch {
    Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
  }
}

/// Unread counts, edits with history, replies and moderation, on every engine.
@Suite("Board: unread, edits, replies, moderation")
struct BoardReadingTests {
  /// Unread counts against a count by hand: the reader's own comments interleaved, comments
  /// deleted, every kind of read position and several limits. (SQLite counts in its indexes:
  /// all comments after the position, less the reader's own.)
  @Test(arguments: EngineFixtures.withRemote)
  func unreadCountsMatchACountByHand(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let thread = try bob.createThread(title: "t", description: "", image: nil)
    var authors: [String?] = []
    for index in 1...45 {
      let byAlice = index % 3 == 0 || index % 7 == 0
      try (byAlice ? alice : bob).addComment(to: 1, text: "c\(index)")
      authors.append(byAlice ? "alice" : "bob")
    }
    for number in [2, 9, 21, 40] {
      _ = try (authors[number - 1] == "alice" ? alice : bob).deleteComment(number, inThread: 1)
      authors[number - 1] = nil
    }
    for position in [0, 1, 5, 17, 30, 44, 45] {
      try alice.markRead(thread, upTo: position)
      let others = authors.enumerated().filter { $0.offset + 1 > position && $0.element == "bob" }
      for limit in [1, 3, 10, 1000] {
        let state = try alice.client.unread(
          Board.threadClass, objectIds: [thread.objectId], countUpTo: limit)[thread.objectId]
        #expect(state?.position == Int64(position))
        #expect(
          state?.unreadChildren == min(others.count, limit), "position \(position), limit \(limit)")
      }
    }
  }

  @Test(arguments: EngineFixtures.withRemote)
  func unreadCountsFollowEachPersonsReadPosition(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let thread = try alice.createThread(title: "t", description: "", image: nil)
    #expect(try alice.thread(1).unread == 0, "your own thread is never unread")
    #expect(try bob.thread(1).unread == 1, "a thread never opened counts itself")
    try bob.addComment(to: 1, text: "one")
    try bob.addComment(to: 1, text: "two")
    #expect(try alice.thread(1).unread == 2)
    #expect(try bob.thread(1).unread == 1, "bob's own comments never count")
    try alice.markRead(thread, upTo: 1)
    #expect(try alice.thread(1).unread == 1)
    try alice.markRead(thread, upTo: 0)
    #expect(try alice.thread(1).unread == 1, "a read position never moves back")
    try alice.addComment(to: 1, text: "mine")
    #expect(try alice.thread(1).unread == 1, "alice's comment does not count for her")
    #expect(try bob.thread(1).unread == 2)
    #expect(try alice.unreadThreads(page: 1).items.map(\.number) == [1])
    try alice.markAllRead()
    #expect(try alice.thread(1).unread == 0)
    #expect(try alice.unreadThreads(page: 1).items.isEmpty)
    #expect(try alice.nextUnreadThread() == nil)
    #expect(try bob.nextUnreadThread()?.number == 1, "alice's read positions are hers alone")
    // Caught up, her own comment keeps her caught up.
    try alice.addComment(to: 1, text: "again")
    #expect(try alice.unreadThreads(page: 1).items.isEmpty)
  }

  @Test(arguments: EngineFixtures.withRemote)
  func showOpensOnThePageOfTheFirstUnreadComment(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let thread = try alice.createThread(title: "long", description: "", image: nil)
    for index in 1...45 { try bob.addComment(to: 1, text: "c\(index)") }
    #expect(try alice.firstUnreadPage(of: try alice.thread(1)) == 1)
    try alice.markRead(thread, upTo: 25)
    #expect(try alice.firstUnreadPage(of: try alice.thread(1)) == 2)
    try alice.markRead(thread, upTo: 40)
    #expect(try alice.firstUnreadPage(of: try alice.thread(1)) == 3)
    #expect(try alice.thread(1).unread == 5)
  }

  /// A post edited again and again keeps its first revision and the latest 99, on each engine
  /// (its triggers drop the rest), and its history is paged with the true numbers.
  @Test(arguments: EngineFixtures.withRemote)
  func onlyTheFirstAndTheLatestRevisionsAreKept(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "t", description: "", image: nil)
    try alice.addComment(to: 1, text: "edit 0")
    for edit in 1...130 { try alice.editComment(1, inThread: 1, text: "edit \(edit)") }
    let first = try bob.history(of: 1, comment: 1)
    #expect(first.pages == 6)
    #expect(first.page.items.map(\.number) == [1] + Array(32...50))
    #expect(first.page.items.first?.fields["text"] == .string("edit 0"))
    #expect(first.page.items.last?.fields["text"] == .string("edit 49"))
    #expect(first.page.hasMore)
    let last = try bob.history(of: 1, comment: 1, page: 6)
    #expect(last.page.items.map(\.number) == [131] && !last.page.hasMore)
    #expect(last.page.items.first?.fields["text"] == .string("edit 130"))
    #expect(
      try bob.history(of: 1, comment: 1, page: 5).page.items.map(\.number) == Array(111...130))
    #expect(try bob.history(of: 1, comment: 1, page: 7).page.items.isEmpty)
  }

  @Test(arguments: EngineFixtures.withRemote)
  func editsKeepTheirRevisionsAndOnlyTheAuthorEdits(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "before", description: "d1", image: nil)
    try alice.addComment(to: 1, text: "first text")
    #expect(try alice.comment(1, inThread: 1).editDate == nil)
    let edited = try alice.editComment(1, inThread: 1, text: "second text")
    #expect(edited.text == "second text")
    #expect(edited.editDate != nil)
    try alice.editComment(1, inThread: 1, text: "third text")
    let history = try bob.history(of: 1, comment: 1).page.items
    #expect(
      history.map { $0.fields["text"]?.stringValue } == ["first text", "second text", "third text"])
    #expect(history.map(\.number) == [1, 2, 3])
    #expect(history[0].date <= history[1].date && history[1].date <= history[2].date)

    expectCode(.noAccess) { try bob.editComment(1, inThread: 1, text: "hijack") }
    expectCode(.noAccess) { try bob.editThread(1, title: "hijack", description: nil) }
    expectCode(.notFound) { try alice.editComment(9, inThread: 1, text: "x") }
    #expect(try alice.comment(1, inThread: 1).text == "third text")

    try alice.editThread(1, title: "after", description: nil)
    let thread = try bob.thread(1)
    #expect(thread.title == "after" && thread.description == "d1" && thread.editDate != nil)
    #expect(
      try bob.history(of: 1, comment: nil).page.items.map { $0.fields["title"]?.stringValue } == [
        "before", "after",
      ])

    // Deleted with the post, its revisions go too.
    try alice.deleteComment(1, inThread: 1)
    expectCode(.notFound) { _ = try alice.history(of: 1, comment: 1) }
    expectCode(.notFound) { try alice.editComment(1, inThread: 1, text: "x") }
  }

  @Test(arguments: EngineFixtures.withRemote)
  func repliesQuoteTheCommentTheyAnswer(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "t", description: "", image: nil)
    try alice.addComment(to: 1, text: "question?\nsecond line")
    let reply = try bob.addComment(to: 1, text: "answer", replyTo: 1)
    #expect(reply.replyTo == 1)
    #expect(reply.quote?.text.hasPrefix("question?") == true)
    let page = try alice.comments(of: try alice.thread(1), page: 1)
    #expect(page.items[1].quote?.number == 1)
    expectCode(.notFound) { try bob.addComment(to: 1, text: "to nothing", replyTo: 7) }
    #expect(try alice.thread(1).commentCount == 2, "nothing was posted")
  }

  @Test(arguments: EngineFixtures.withRemote)
  func moderatorsTakeDownOthersPublicPostsLeavingATombstone(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let owner = try world.ownerBoard()
    let alice = try world.board("alice")
    let mod = try world.board("mod")
    #expect(try owner.isOwner())
    #expect(try !alice.isOwner())
    try alice.createThread(title: "spam", description: "buy", image: nil)
    try alice.addComment(to: 1, text: "more spam")
    try alice.editComment(1, inThread: 1, text: "edited spam")

    expectCode(.noAccess) { try mod.deleteComment(1, inThread: 1) }
    expectCode(.noAccess) { try alice.setModerator(handle: "@" + mod.me.userName, true) }
    expectCode(.noAccess) { _ = try alice.moderators() }
    try owner.setModerator(handle: "@" + mod.me.userName, true)
    #expect(try owner.moderators().map(\.objectId) == [mod.me.objectId])
    try mod.refresh()  // the next command reads the role again
    #expect(mod.isModerator)
    #expect(try mod.deleteComment(1, inThread: 1) == .takenDown)
    let comment = try alice.comment(1, inThread: 1)
    #expect(comment.text.isEmpty && comment.moderatedDate != nil)
    expectCode(.notFound) { _ = try alice.history(of: 1, comment: 1) }
    expectCode(.notFound) { try alice.editComment(1, inThread: 1, text: "back") }
    expectCode(.notFound) { try mod.deleteComment(1, inThread: 1) }
    #expect(try mod.deleteThread(1) == .takenDown)
    let thread = try alice.thread(1)
    #expect(thread.title.isEmpty && thread.description.isEmpty && thread.moderatedDate != nil)

    try owner.setModerator(handle: mod.me.userName, false)
    try mod.refresh()
    #expect(!mod.isModerator)
    try alice.addComment(to: 1, text: "again")
    expectCode(.noAccess) { try mod.deleteComment(2, inThread: 1) }
  }

  @Test("PostgreSQL: a member with psql cannot read others' positions, rewrite history or moderate")
  func postgresMembersCannotGetAroundTheRules() throws {
    let world = try BoardWorld(PostgresFixture())
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let thread = try alice.createThread(title: "t", description: "", image: nil)
    try alice.addComment(to: 1, text: "original")
    try alice.editComment(1, inThread: 1, text: "edited")
    try alice.markRead(thread, upTo: 1)
    try bob.markRead(thread, upTo: 0)
    let psql = try PostgresConnection(uri: try world.database.location(as: "bob"))
    #expect(
      try psql.query(
        "SELECT count(*) FROM forum.read_positions_of($1)", [.text("{\(thread.objectId)}")]
      ).int(0, 0) == 1,
      "bob sees his own read position only")
    #expect(throws: PostgresError.self) {
      try psql.query("SELECT count(*) FROM forum.read_positions")
    }
    let aliceId = alice.me.objectId
    #expect(throws: PostgresError.self) {
      try psql.query(
        "INSERT INTO forum.read_positions(user_id, object_id, position) VALUES ($1, $2, 0)",
        [.text(aliceId), .text(thread.objectId)])
    }
    #expect(throws: PostgresError.self) { try psql.query("DELETE FROM forum.revisions") }
    #expect(throws: PostgresError.self) {
      try psql.query("UPDATE forum.revisions SET data = '{}'::jsonb")
    }
    #expect(throws: PostgresError.self) {
      try psql.query(
        "INSERT INTO forum.revisions(object_id, date, data) VALUES ('x', 0, '{}'::jsonb)")
    }
    #expect(throws: PostgresError.self) {
      try psql.query("SELECT forum.set_board_role('moderator', $1, true)", [.text(bob.me.objectId)])
    }
    #expect(throws: PostgresError.self) {
      try psql.query(
        "SELECT forum.moderate('Comment', $1)", [.text(alice.comment(1, inThread: 1).objectId)])
    }
    // Alice herself cannot erase her history, nor forge an edit date.
    let alicePsql = try PostgresConnection(uri: try world.database.location(as: "alice"))
    #expect(throws: PostgresError.self) { try alicePsql.query("DELETE FROM forum.revisions") }
    _ = try? alicePsql.query(
      "UPDATE forum.objects SET data = data || '{\"editDate\": 1}'::jsonb WHERE class = 'Comment'")
    #expect(try alice.comment(1, inThread: 1).editDate != 1)
    #expect(try alice.history(of: 1, comment: 1).page.items.count == 2)
    #expect(try alice.thread(1).unread == 0)
  }
}
