import Testing

@testable import Datastore

/// `ChangeWire`: what the server writes, the remote engine reads back unchanged; what a hostile
/// or broken server writes instead is a `Malformed` naming the field, never a crash, a default
/// or a name that could carry an escape to a screen.
@Suite("The change feed's wire")
struct ChangeWireTests {
  static let batch = ChangeBatch(
    changes: [
      Change(sequence: 7, className: "Thread", objectId: "AbCdEfGhIjKlMnOp", kind: .created),
      Change(
        sequence: 9, className: "Comment", objectId: "ZyXwVuTsRqPoNmLk", kind: .deleted,
        parentId: "AbCdEfGhIjKlMnOp", number: 3),
      Change(sequence: Int64.max, className: "Todo", objectId: "a_b-c", kind: .updated),
    ], next: Int64.max, hasMore: true, missed: true)

  @Test func roundTrips() throws {
    let bytes = ChangeWire.bytes(Self.batch)
    #expect(try ChangeWire.batch(bytes, since: 0, limit: 3) == Self.batch)
    let empty = ChangeBatch(changes: [], next: 12, hasMore: false)
    #expect(try ChangeWire.batch(ChangeWire.bytes(empty), since: 12, limit: 500) == empty)
    // A cursor above the feed's top is brought back to it (SQLite).
    #expect(try ChangeWire.batch(ChangeWire.bytes(empty), since: 40, limit: 500) == empty)
    for change in Self.batch.changes {
      #expect(try ChangeWire.change(ChangeWire.json(change).jsonBytes()) == change)
    }
  }

  /// Each hostile answer, and the field its error must name.
  static let hostile: [(String, String)] = [
    (#"[]"#, "the answer"),
    (#"{"changes":{},"next":1,"hasMore":false,"missed":false}"#, "changes"),
    (#"{"changes":[],"next":"1","hasMore":false,"missed":false}"#, "next"),
    (#"{"changes":[],"next":1.5,"hasMore":false,"missed":false}"#, "next"),
    (#"{"changes":[],"next":-1,"hasMore":false,"missed":false}"#, "next"),
    (#"{"changes":[],"next":99999999999999999999999,"hasMore":false,"missed":false}"#, "next"),
    (#"{"changes":[],"next":9,"hasMore":"no","missed":false}"#, "hasMore"),
    (#"{"changes":[],"next":9,"hasMore":false}"#, "missed"),
    (#"{"changes":[1],"next":1,"hasMore":false,"missed":false}"#, "changes[0]"),
    (
      #"{"changes":[{"sequence":"5","className":"Thread","objectId":"a","kind":"created"}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].sequence"
    ),
    (
      #"{"changes":[{"sequence":5,"className":"\u001b[2J","objectId":"a","kind":"created"}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].className"
    ),
    (
      #"{"changes":[{"sequence":5,"className":"Thread","objectId":"a\u001b]0;x\u0007","kind":"created"}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].objectId"
    ),
    (
      #"{"changes":[{"sequence":5,"className":"Thread","objectId":"a","kind":"exploded"}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].kind"
    ),
    (
      #"{"changes":[{"sequence":5,"className":"Thread","objectId":"a","kind":"created","parentId":7}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].parentId"
    ),
    (
      #"{"changes":[{"sequence":5,"className":"Thread","objectId":"a","kind":"created","number":1e300}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].number"
    ),
    // Out of order, at or before `since`, and `next` behind the changes.
    (
      #"{"changes":[{"sequence":6,"className":"T","objectId":"a","kind":"created"},{"sequence":6,"className":"T","objectId":"b","kind":"created"}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[1].sequence"
    ),
    (
      #"{"changes":[{"sequence":5,"className":"T","objectId":"a","kind":"created"}],"next":9,"hasMore":false,"missed":false}"#,
      "changes[0].sequence"
    ),
    (
      #"{"changes":[{"sequence":8,"className":"T","objectId":"a","kind":"created"}],"next":7,"hasMore":false,"missed":false}"#,
      "next"
    ),
  ]

  @Test(arguments: hostile)
  func refusesWhatTheProtocolDoesNotSay(answer: String, field: String) {
    // `since` 5: a change at 5 is not after it.
    #expect {
      _ = try ChangeWire.batch(Array(answer.utf8), since: 5, limit: 10)
    } throws: { error in
      (error as? ChangeWire.Malformed)?.field == field
    }
  }

  @Test func refusesMoreThanAskedAndHugeAnswers() {
    let three = ChangeWire.bytes(Self.batch)
    #expect(throws: ChangeWire.Malformed.self) {
      _ = try ChangeWire.batch(three, since: 0, limit: 2)
    }
    let huge = Array(#"{"changes":["#.utf8) + [UInt8](repeating: 0x20, count: 2 << 20)
    #expect(throws: ChangeWire.Malformed.self) {
      _ = try ChangeWire.batch(huge, since: 0, limit: 2)
    }
    let deep = Array(String(repeating: "[", count: 100_000).utf8)
    #expect(throws: ChangeWire.Malformed.self) {
      _ = try ChangeWire.batch(deep, since: 0, limit: 2)
    }
    let notUTF8: [UInt8] = [0x7B, 0xFF, 0x7D]
    #expect(throws: ChangeWire.Malformed.self) {
      _ = try ChangeWire.batch(notUTF8, since: 0, limit: 2)
    }
  }
}
