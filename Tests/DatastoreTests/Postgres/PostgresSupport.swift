import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// The board's rules as the tests install them: the same as `Board.rules`, or a board made here
/// is "older than this forum" to forum-bench, which opens it with `Board.rules`.
let boardRulesForTests = EngineRules(
  sequences: [SequenceRule(className: "Thread", field: "number", sequence: "threadNumber")],
  owners: [
    OwnerRule(className: "Thread", field: "user"), OwnerRule(className: "Comment", field: "user"),
    OwnerRule(className: "Message", field: "user"),
    OwnerRule(className: "Preference", field: "user"),
  ],
  children: [
    ChildRule(
      childClass: "Comment", parentField: "thread", parentClass: "Thread", numberField: "number",
      lastNumberField: "lastCommentNumber", countField: "commentCount",
      activityField: "lastActivity", fileField: "fileName"),
    ChildRule(
      childClass: "Message", parentField: "conversation", parentClass: "Conversation",
      numberField: "number", lastNumberField: "lastMessageNumber", countField: "messageCount",
      activityField: "lastActivity", fileField: nil),
  ],
  pairs: [
    PairRule(
      className: "Conversation", ownerField: "user", partnerField: "partner", pairField: "pair")
  ],
  revisions: [
    RevisionRule(className: "Thread", fields: ["title", "description"], editDateField: "editDate"),
    RevisionRule(className: "Comment", fields: ["text"], editDateField: "editDate"),
  ],
  moderation: [
    ModerationRule(
      className: "Thread", role: "moderator",
      contentFields: ["title", "description", "image", "fileName"], fileField: "fileName",
      markField: "moderatedDate"),
    ModerationRule(
      className: "Comment", role: "moderator", contentFields: ["text"],
      markField: "moderatedDate"),
  ])

/// A test board with the schema installed and `alice` and `bob` granted forum_member.
func installedBoard(members: [String] = ["alice", "bob"], indexes: [IndexSpec] = []) throws
  -> PostgresTestBoard
{
  let cluster = try PostgresTestCluster.shared()
  let board = try cluster.board(members: members)
  let owner = try PostgresConnection(uri: board.owner.uri)
  try PostgresSchema.install(on: owner, rules: boardRulesForTests, indexes: indexes)
  for member in members {
    try cluster.admin("GRANT forum_member TO \(board[member].name)")
  }
  return board
}

/// Every row of every table in the forum schema, read as the owner: equal fingerprints mean
/// nothing was written.
func postgresFingerprint(_ board: PostgresTestBoard, updateDates: Bool = true) throws -> [String] {
  let owner = try PostgresConnection(uri: board.owner.uri)
  var rows: [String] = []
  // Without update dates, the feed's rows are left out too: an update that changes nothing else
  // still moves its row's date, and the feed records that it happened.
  for table in PostgresSchema.tables where updateDates || table != "changes" {
    // A board of an older schema lacks the newer tables.
    guard
      try owner.query("SELECT to_regclass($1) IS NOT NULL", [.text("forum.\(table)")]).bool(0, 0)
    else { continue }
    let row =
      updateDates || table != "objects"
      ? "t::text"
      : "(t.id, t.class, t.object_id, t.create_date, t.readers, t.writers, t.data)::text"
    let result = try owner.query("SELECT \(row) FROM forum.\(table) t ORDER BY 1")
    rows.append(table)
    rows += result.rows { result.text($0, 0) ?? "NULL" }
  }
  return rows
}

/// Expects `body` to fail with one of the SQLSTATEs, or to change no row (returning 0 rows).
func expectRefused(
  _ what: String, states: Set<String>, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws -> PostgresResult
) {
  do {
    let result = try body()
    #expect(
      result.rowCount == 0, "\(what): \(result.rowCount) rows", sourceLocation: sourceLocation)
  } catch let error as PostgresError {
    #expect(
      states.contains(error.sqlState ?? ""), "\(what): \(error)", sourceLocation: sourceLocation)
  } catch {
    Issue.record("\(what): \(error)", sourceLocation: sourceLocation)
  }
}
