import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

@Suite("JSON shapes")
struct JSONShapeTests {
  /// `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`, parsed independently of `BackendDate`.
  static func milliseconds(_ text: String) -> Int64? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
    guard text.utf8.count == 24, let date = formatter.date(from: text) else { return nil }
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
  }

  @Test(arguments: [
    (Int64(0), "1970-01-01T00:00:00.000Z"),
    (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
    (951_782_400_007, "2000-02-29T00:00:00.007Z"),
    (4_102_444_799_999, "2099-12-31T23:59:59.999Z"),
  ])
  func backendDateFormat(milliseconds: Int64, text: String) {
    #expect(BackendDate.string(milliseconds: milliseconds) == text)
    #expect(JSONShapeTests.milliseconds(text) == milliseconds)
  }

  /// The day arithmetic and the bytes appended in place (`write(milliseconds:to:)`, what a
  /// server lists with) agree with libc's `gmtime` over the whole range it takes, leap days and
  /// century years included, and past it (the years `gmtime` writes itself).
  @Test func backendDateWrittenInPlaceAgreesWithGmtime() {
    var samples: [Int64] = [
      0, 1, 999, 86_399_999, 951_782_400_000, 4_107_542_400_000, 253_402_300_799_999,
      253_402_300_800_000, -1, -86_400_001, 13_569_465_600_000,
    ]
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20_000 {
      samples.append(Int64.random(in: 0..<253_402_300_800_000, using: &generator))
    }
    for day in stride(from: Int64(0), to: 2_932_897, by: 97) {
      samples.append(day * 86_400_000 + 43_210_987)
    }
    for milliseconds in samples {
      var out: [UInt8] = Array("x".utf8)
      BackendDate.write(milliseconds: milliseconds, to: &out)
      let expected = BackendDate.gmtimeString(milliseconds: milliseconds)
      #expect(String(decoding: out.dropFirst(), as: UTF8.self) == expected, "\(milliseconds)")
      #expect(BackendDate.string(milliseconds: milliseconds) == expected, "\(milliseconds)")
    }
  }

  @Test(arguments: EngineFixtures.all)
  func dataObjectRoundTrip(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase()
    do {
      let store = try Datastore.open(try database.location(as: "alice"))
      let login = try store.loginAnonymously(secret: Datastore.newSecret())
      let client = try store.client(sessionToken: login.sessionToken)
      let owner = login.user.objectId
      // Granted flags only, whatever the JSON said.
      let acl = try ACL(
        json: .object([
          "*": .object(["read": .bool(true), "write": .bool(false)]),
          owner: .object(["read": .bool(true), "write": .bool(true)]),
          "role:mods": .object(["read": .bool(false), "write": .bool(true)]),
          "role:nobody": .object(["read": .bool(false)]),
        ]))
      #expect(acl.readers == ["*", owner])
      #expect(acl.writers == [owner, "role:mods"])
      let fields: [String: JSONValue] = [
        "title": .string("スレッド \"quoted\" \\ back\nslash\t\u{1}\u{85}\u{2028}\u{202E}\u{2067} 🧵"),
        "count": .int(-42), "big": .int(Int64.max), "ratio": .double(1.5), "flag": .bool(false),
        "nothing": .null, "tags": .array([.string("a"), .int(1), .array([])]),
        "nested": .object(["deep": .object(["x": .string("y")])]),
        "thread": .pointer(className: "Thread", objectId: "ABCDEFGHijklmnop"),
      ]
      let created = try client.create("Thread", fields: fields, acl: acl)
      let stored = try client.get("Thread", objectId: created.objectId)
      #expect(stored == created)
      #expect(stored.fields == fields)
      // The same values through an update, which the engine merges in SQL.
      let blank = try client.create("Thread", fields: ["title": .string("x")], acl: acl)
      var expected = fields
      expected["nothing"] = nil  // setting null removes a field
      let updated = try client.update("Thread", objectId: blank.objectId, set: fields)
      #expect(updated.fields == expected)
      #expect(try client.get("Thread", objectId: blank.objectId).fields == expected)

      let json = stored.json
      let body = try #require(json.objectValue)
      #expect(
        Set(body.keys) == Set(fields.keys).union(["objectId", "createDate", "updateDate", "acl"]))
      #expect(body["objectId"] == .string(created.objectId))
      let createDate = try #require(body["createDate"]?.stringValue)
      let updateDate = try #require(body["updateDate"]?.stringValue)
      #expect(JSONShapeTests.milliseconds(createDate) == created.createDate)
      #expect(JSONShapeTests.milliseconds(updateDate) == created.updateDate)
      #expect(
        body["acl"]
          == .object([
            "*": .object(["read": .bool(true)]),
            owner: .object(["read": .bool(true), "write": .bool(true)]),
            "role:mods": .object(["write": .bool(true)]),
          ]))
      let aclText = try #require(body["acl"]).jsonText()
      #expect(!aclText.contains("false"))
      #expect(!aclText.contains("nobody"))
      #expect(try ACL(json: try #require(body["acl"])) == acl)

      // Text round trip: what we print parses back to the same value, in compact sorted form.
      let text = json.jsonText()
      #expect(try JSONValue.parse(text) == json)
      #expect(!text.contains("\n") && !text.contains(": "))
      #expect(text.contains("\"objectId\":\"\(created.objectId)\""))
      // Line separators, C1 controls and bidi overrides are escaped, never printed raw.
      for escape in ["\\u0001", "\\u0085", "\\u2028", "\\u202e", "\\u2067"] {
        #expect(text.contains(escape), "\(escape)")
      }
      #expect(
        !text.unicodeScalars.contains { [0x01, 0x85, 0x2028, 0x202E, 0x2067].contains($0.value) })
      // Foundation's decoder agrees with our encoder.
      let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
      #expect(decoded == json)
      let reencoded = try JSONEncoder().encode(json)
      #expect(try JSONValue.parse(String(decoding: reencoded, as: UTF8.self)) == json)
    }
  }

  @Test func includedPointersAreNestedObjects() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let master = store.master
      let thread = try master.create("Thread", fields: ["title": .string("t")])
      let hidden = try master.create("Thread", fields: ["title": .string("h")], acl: ACL())
      try master.create(
        "Comment",
        fields: ["thread": .pointer(className: "Thread", objectId: thread.objectId), "n": .int(1)])
      try master.create(
        "Comment",
        fields: ["thread": .pointer(className: "Thread", objectId: hidden.objectId), "n": .int(2)])
      let comments = try store.client(sessionToken: nil).find(
        Query(className: "Comment", order: ["n"], include: ["thread"]))
      #expect(comments.count == 2)
      let nested = try #require(comments[0].json.objectValue?["thread"]?.objectValue)
      #expect(nested["__type"] == .string("Object"))
      #expect(nested["className"] == .string("Thread"))
      #expect(nested["objectId"] == .string(thread.objectId))
      #expect(nested["title"] == .string("t"))
      // A target the caller cannot read stays a bare pointer.
      #expect(comments[1].included.isEmpty)
      #expect(comments[1]["thread"]?.pointerId == hidden.objectId)
      #expect(comments[1].json.objectValue?["thread"]?.objectValue?["__type"] == .string("Pointer"))
    }
  }

  @Test func fileInfoAndErrorShapes() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let info = try store.master.putFile(name: "cat.png", bytes: [1, 2, 3], mimeType: "image/png")
      let body = try #require(info.json.objectValue)
      #expect(
        Set(body.keys) == ["fileName", "mimeType", "fileSize", "createDate", "updateDate", "acl"])
      #expect(body["fileSize"] == .int(3))
      #expect(JSONShapeTests.milliseconds(body["createDate"]?.stringValue ?? "") == info.createDate)
      #expect(body["acl"] == .object(["*": .object(["read": .bool(true), "write": .bool(true)])]))
      #expect(try store.master.fileInfo(name: "cat.png") == info)
    }
    let messages: [ErrorCode: String] = [
      .invalid: "title is invalid.", .empty: "title is empty.",
      .authentication: "Authentication error by header incorrect.",
      .noAccess: "No access with ACL.", .notFound: "No data available.",
      .fileTooLarge: "File size Limit error.", .systemError: "System error.",
    ]
    for code in ErrorCode.allCases {
      let error = DatastoreError(code, field: "title", detail: "why")
      #expect(error.message == messages[code])
      #expect(error.description == "\(code.rawValue) \(messages[code]!) (why)")
    }
  }
}
