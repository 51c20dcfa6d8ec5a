import Foundation
import Testing

@testable import Datastore

/// A server's find writes each row straight from its stored text (`ObjectShape.write(stored:)`,
/// `CanonicalJSON`) and builds the object only when it cannot. Whatever a row holds (the
/// board's own writing, text someone wrote with sqlite3 or psql: spaces, keys out of order or
/// twice, escapes of every kind, fractions, deep nesting, bytes that are not JSON), the bytes it
/// writes must be the ones the built object gives, or it must write nothing and say so. And
/// what the board writes itself must be taken, or the fast path is never used.
@Suite("Stored rows written as they are")
struct StoredWriteTests {
  static let shapes: [ObjectShape] = [
    .datastore, ObjectShapeTests.board, ObjectShape.datastore.forApps,
    ObjectShapeTests.board.forApps,
  ]

  /// Edits that make stored text anything but the board's own writing.
  static let snippets = [
    " ", "\n", "\t", #"\/"#, #"\u00e9"#, #"\u0001"#, #"\u001F"#, #"\u0085"#, #"\u2028"#,
    #"\ud83d\ude00"#, #"\b"#, "-0", "1.0", "1e5", "01", "12345678901234567890", #""text":"dup","#,
    #"{"b":2,"a":1}"#, ",", "}", "{", "\"", "\u{85}", "\u{2028}", "\u{61C}", "…", "\u{7F}",
    "\u{1}", "é", #""lastActivity":5,"#, #""objectId":"x","#, "null", "[1,{}]", "\\",
  ]

  static func mutated(_ text: String, _ generator: inout ObjectShapeTests.Generator) -> String {
    var bytes = Array(text.utf8)
    for _ in 0..<(1 + generator.next(3)) {
      let at = generator.next(bytes.count + 1)
      switch generator.next(3) {
      case 0 where !bytes.isEmpty:
        bytes.removeSubrange(
          min(at, bytes.count - 1)..<min(bytes.count, at + 1 + generator.next(3)))
      default: bytes.insert(contentsOf: generator.pick(snippets).utf8, at: at)
      }
    }
    // As the engine reads it: bytes that are not UTF-8 shown as U+FFFD.
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Whether `JSONValue.write` writes the value as `CanonicalJSON` takes it: no fraction, every
  /// key printable ASCII, no relation (hidden as apps are answered).
  static func plainlyWritten(_ value: JSONValue) -> Bool {
    switch value {
    case .double: return false
    case .int(let number): return abs(number) < 1_000_000_000_000_000_000
    case .array(let values): return values.allSatisfy(plainlyWritten)
    case .object(let fields):
      return fields.allSatisfy { key, value in
        key.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
          && value != .string("Relation") && plainlyWritten(value)
      }
    default: return true
    }
  }

  static func row(
    _ generator: inout ObjectShapeTests.Generator, data: String, counts: String?
  ) -> StoredObject {
    StoredObject(
      className: generator.pick(["Thread", "Comment", User.className, "Note"]),
      objectId: "id\(generator.next(1000))",
      createDate: Int64(generator.next(2_000_000_000)) * 1000,
      updateDate: Int64(generator.next(2_000_000_000)) * 1000 + 7, readers: nil, writers: nil,
      data: data, counts: counts)
  }

  /// Writes `row` both ways; true when the stored text was taken (and then gave the same bytes).
  static func compare(_ row: StoredObject, acl: ACL, _ shape: ObjectShape) -> Bool {
    var built: [UInt8] = []
    shape.write(row.object(acl: acl, reading: nil), to: &built)
    var written: [UInt8] = [7]
    var aclJSON: [UInt8] = []
    ObjectShape.write(acl, to: &aclJSON)
    let taken = shape.write(stored: row, acl: aclJSON, to: &written)
    if taken {
      #expect(
        String(decoding: written.dropFirst(), as: UTF8.self)
          == String(decoding: built, as: UTF8.self), "data \(row.data) counts \(row.counts ?? "-")")
    } else {
      #expect(written == [7], "nothing written when not taken: \(row.data)")
    }
    return taken
  }

  @Test(arguments: [UInt64(1), 2, 3, 4])
  func aRowWrittenStraightIsTheBuiltObjectByteForByte(seed: UInt64) {
    var generator = ObjectShapeTests.Generator(state: seed)
    var (plain, plainTaken, mutatedTaken) = (0, 0, 0)
    for _ in 0..<3_000 {
      let fields = generator.fields(depth: 0)
      let text = JSONValue.object(fields).jsonText()
      var counts: String?
      if generator.next(3) == 0 {
        var kept: [String: JSONValue] = [
          "commentCount": .int(Int64(generator.next(50))),
          "lastActivity": .int(Int64(generator.next(2_000_000_000)) * 1000),
        ]
        if generator.next(4) == 0 { kept[generator.pick(ObjectShapeTests.Generator.keys)] = .null }
        if generator.next(4) == 0 { kept["text"] = generator.value(depth: 1) }
        counts = JSONValue.object(kept).jsonText()
      }
      let acl = generator.acl()
      let countsPlain = counts.map { !$0.contains("null") && !$0.contains("{\"") } ?? true
      let isPlain = StoredWriteTests.plainlyWritten(.object(fields)) && countsPlain
      for shape in StoredWriteTests.shapes {
        let stored = StoredWriteTests.row(&generator, data: text, counts: counts)
        let taken = StoredWriteTests.compare(stored, acl: acl, shape)
        if isPlain {
          plain += 1
          if taken { plainTaken += 1 }
        }
        let edited = StoredWriteTests.row(
          &generator, data: StoredWriteTests.mutated(text, &generator),
          counts: counts.map {
            generator.next(2) == 0 ? StoredWriteTests.mutated($0, &generator) : $0
          })
        if StoredWriteTests.compare(edited, acl: acl, shape) { mutatedTaken += 1 }
      }
    }
    // The board's own writing is always taken; some edited rows are too (spaces, sorted keys).
    #expect(plain > 1_000 && plainTaken == plain, "\(plainTaken) of \(plain)")
    #expect(mutatedTaken > 100)
  }

  @Test func textThatIsNotOneObjectIsBuiltAsBefore() {
    var generator = ObjectShapeTests.Generator(state: 9)
    for text in [
      "", "[]", "null", "{}", #"{"a":1} x"#, #"{"a":1"#, #"{"a":"#, #"{"a" 1}"#, "{,}",
      #"{"a":1,}"#, String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
      #"{"a":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
    ] {
      for shape in StoredWriteTests.shapes {
        _ = StoredWriteTests.compare(
          StoredWriteTests.row(&generator, data: text, counts: nil), acl: ACL(), shape)
      }
    }
  }

  /// PostgreSQL gives a `jsonb` back as its own text: a space after each colon and comma, keys
  /// ordered by their length first. Still written straight, and as the built object.
  @Test func aRowAsPostgreSQLPrintsItIsWrittenStraight() {
    let row = StoredObject(
      className: "Comment", objectId: "c1", createDate: 1_000, updateDate: 2_000,
      readers: nil, writers: nil,
      data: #"{"text": "猫\n\"x\"", "user": {"__type": "Pointer", "objectId": "u1", "#
        + #""className": "user"}, "number": 3, "thread": {"__type": "Pointer", "#
        + #""objectId": "t1", "className": "Thread"}, "editDate": 1700000000000}"#,
      counts: nil)
    for shape in StoredWriteTests.shapes {
      #expect(StoredWriteTests.compare(row, acl: .publicRead(owner: "u1"), shape))
    }
  }

  /// Keys out of order at every level (as `jsonb` gives them, shortest first: an app can store
  /// this through the API on PostgreSQL) and many keys in reverse: each member is read once
  /// and the keys sorted once. Reading an out-of-order object again cost 2^depth (31 levels:
  /// minutes of a core per request), and sorting by insertion n² (100,000 keys: 40 s).
  /// (A minute is the bound of a hang, not a measure: each takes milliseconds.)
  @Test func disorderCostsItsSizeNotItsDepthSquared() {
    var nested = #"{"b":1,"aa":1}"#
    for _ in 0..<30 { nested = #"{"b":\#(nested),"aa":1}"# }
    let keys = (0..<100_000).reversed().map { #""k\#($0)":0"# }.joined(separator: ",")
    for data in [#"{"x":\#(nested)}"#, "{\(keys)}"] {
      let row = StoredObject(
        className: "Thread", objectId: "t1", createDate: 0, updateDate: 0, readers: nil,
        writers: nil, data: data, counts: nil)
      let done = DispatchSemaphore(value: 0)
      let taken = Taken()
      Thread.detachNewThread {
        var written: [UInt8] = []
        taken.value = ObjectShapeTests.board.forApps.write(stored: row, acl: [], to: &written)
        done.signal()
      }
      guard done.wait(timeout: .now() + 60) == .success else {
        Issue.record("\(data.utf8.count) bytes took more than a minute")
        continue
      }
      #expect(taken.value == true)
      #expect(StoredWriteTests.compare(row, acl: ACL(), .datastore))
    }
  }

  final class Taken: @unchecked Sendable { var value: Bool? }

  @Test func aCommentAsTheBoardStoresItIsWrittenStraight() {
    let row = StoredObject(
      className: "Comment", objectId: "c1", createDate: 1_000, updateDate: 2_000,
      readers: nil, writers: nil,
      data: #"{"number":3,"text":"猫…\"ok\"\n","#
        + #""thread":{"__type":"Pointer","className":"Thread","objectId":"t1"}}"#,
      counts: nil)
    var (written, acl): ([UInt8], [UInt8]) = ([], [])
    ObjectShape.write(ACL.publicRead(owner: "u1"), to: &acl)
    #expect(
      ObjectShapeTests.board.forApps.write(stored: row, acl: acl, to: &written)
    )
    #expect(
      String(decoding: written, as: UTF8.self)
        == #"{"acl":{"*":{"read":true},"u1":{"read":true,"write":true}},"#
        + #""createDate":"1970-01-01T00:00:01.000Z","number":3,"objectId":"c1","#
        + #""text":"猫…\"ok\"\n","thread":{"__type":"Pointer","className":"Thread","#
        + #""objectId":"t1"},"updateDate":"1970-01-01T00:00:02.000Z"}"#)
  }
}
