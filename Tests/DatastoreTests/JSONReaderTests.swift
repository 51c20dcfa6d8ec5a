import Testing

@testable import Datastore

/// The reader every stored object goes through: what it accepts, what it refuses.
@Suite("JSON reader")
struct JSONReaderTests {
  static let values: [JSONValue] = [
    .null, .bool(true), .bool(false), .int(0), .int(-42), .int(Int64.max), .double(1.5),
    .double(-2.25e-3), .string(""), .string("日本語 \"quoted\" back\\slash\ttab\nline \u{1B}[2J"),
    .string("😀 \u{202E}"), .array([]), .array([.int(1), .string("a"), .null]),
    .object([:]),
    .object(["thread": .pointer(className: "Thread", objectId: "abcdefghijklmnop"), "n": .int(3)]),
  ]

  @Test("what the writer writes, the reader reads back", arguments: values)
  func roundTrip(value: JSONValue) throws {
    #expect(try JSONValue.parse(value.jsonText()) == value)
  }

  /// A stored row the reader refuses keeps what can be read of it, and says it is damaged.
  @Test func aDamagedRowKeepsItsReadableFields() {
    let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
    let salvaged = JSONValue.storedFields(
      #"{"number":7,"deep":\#(deep),"user":{"objectId":"x"},"s":"a]}\"[","n":null}"#)
    #expect(salvaged.damaged)
    #expect(
      salvaged.fields
        == [
          "number": .int(7), "user": .object(["objectId": .string("x")]), "s": .string("a]}\"["),
          "n": .null,
        ])
    let fine = JSONValue.storedFields(#"{"number":7}"#)
    #expect(!fine.damaged && fine.fields == ["number": .int(7)])
    for text in ["[]", "5", #""x""#, "", "{", #"{"a":1,"b":"#, #"{"a":\#(deep)"#] {
      #expect(JSONValue.storedFields(text).damaged, "\(text.prefix(20))")
    }
    #expect(JSONValue.storedFields(#"{"a":1,"b":"#).fields == ["a": .int(1)])
    #expect(JSONValue.storedFields("[]").fields == [:])
  }

  @Test func readsEscapesSurrogatePairsAndNumbers() throws {
    #expect(try JSONValue.parse(#""\ud83d\ude00 \u00e9 \/""#) == .string("😀 é /"))
    #expect(
      try JSONValue.parse(" [ 1 , -0 , 2e3 , 99999999999999999999 ] ")
        == .array([.int(1), .int(0), .double(2000), .double(1e20)]))
    let long = String(repeating: "\\u001b", count: 100_000)
    #expect(
      try JSONValue.parse("\"\(long)\"") == .string(String(repeating: "\u{1B}", count: 100_000)))
  }

  @Test(
    "damaged JSON is E500001, never a crash",
    arguments: [
      "", "{", #"{"a":1"#, "[1,]", "01", "\"\u{01}\"", #"{"a" 1}"#, "tru", "{} x", #""\udc00""#,
      #""\ud800x""#, #""\q""#, "-", "1.", "1e", #"{"a":1,}"#, String(repeating: "[", count: 600),
    ])
  func damaged(text: String) {
    #expect(throws: DatastoreError(.systemError, detail: "stored JSON is damaged")) {
      try JSONValue.parse(text)
    }
  }
}
