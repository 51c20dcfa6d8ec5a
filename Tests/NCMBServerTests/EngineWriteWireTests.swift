import Datastore
import Testing

@testable import NCMBServer

/// forum's remote engine writes one object through NCMB's own calls (`POST classes/C`,
/// `PUT`/`DELETE classes/C/ID`, a user's `PUT users/ID`) with `X-Forum-Wire: 1`: the engine's
/// limits hold (100 levels, 2,000,000 bytes, as on a local board) and the object is answered
/// whole. An app, without the header, keeps NCMB's shape and limits (32 levels, 1 MiB).
@Suite("Engine writes on NCMB's paths")
struct EngineWriteWireTests {
  /// `levels` arrays and objects, one in another.
  static func nested(_ levels: Int) -> JSONValue {
    var value = JSONValue.array([])
    for level in 1..<levels {
      value = level.isMultiple(of: 2) ? .array([value]) : .object(["a": value])
    }
    return value
  }

  static let deep = JSONValue.object(["deep": nested(60)]).jsonText()
  static let big = JSONValue.object([
    "a": .string(String(repeating: "x", count: 900_000)),
    "b": .string(String(repeating: "y", count: 900_000)),
  ]).jsonText()
  static let tooBig = JSONValue.object([
    "a": .string(String(repeating: "x", count: 900_000)),
    "b": .string(String(repeating: "y", count: 900_000)),
    "c": .string(String(repeating: "z", count: 900_000)),
  ]).jsonText()

  private func request(
    _ board: ServedBoard, _ method: String, _ path: String, _ token: String, body: String = "",
    wire: Bool
  ) -> HTTPRequest {
    var request = board.request(method, path, session: token, body: body)
    if wire { request.headers.append((name: "x-forum-wire", value: "1")) }
    return request
  }

  @Test func theEnginesWritesTakeTheEnginesLimitsAndAnswerWhole() throws {
    let board = try ServedBoard()
    let (userId, token) = try board.signUp()
    let acl = #""acl":{"\#(userId)":{"read":true,"write":true}}"#
    // 60 levels and 1.8 MB: past NCMB's limits, within the engine's.
    let (created, answer) = try board.send(
      request(board, "POST", "classes/Note", token, body: Self.deep, wire: true))
    #expect(created == 201, "\(answer)")
    let object = try DataObject(wire: answer)
    #expect(object.className == "Note" && object["deep"] == Self.nested(60), "\(answer)")
    let (large, largeAnswer) = try board.send(
      request(board, "POST", "classes/Note", token, body: Self.big, wire: true))
    #expect(large == 201, "\(largeAnswer.jsonText().prefix(200))")
    // The engine's own refusal, as its wire says it (the field, the reason's case).
    let (refused, refusal) = try board.send(
      request(board, "POST", "classes/Note", token, body: Self.tooBig, wire: true))
    #expect(refused == 400, "\(refusal)")
    let error = try #require(DatastoreError(wire: refusal), "\(refusal)")
    #expect(error.code == .invalid && error.field != nil, "\(refusal)")
    // An update with NCMB's operators, answered whole.
    let (updated, updatedAnswer) = try board.send(
      request(
        board, "PUT", "classes/Note/\(object.objectId)", token,
        body: #"{"n":{"__op":"Increment","amount":2},"tags":{"__op":"Add","objects":["a"]},"#
          + #""gone":{"__op":"Delete"},"deep":\#(Self.nested(70).jsonText()),\#(acl)}"#,
        wire: true))
    #expect(updated == 200, "\(updatedAnswer)")
    let after = try DataObject(wire: updatedAnswer)
    #expect(after["n"] == .int(2) && after["tags"] == .array([.string("a")]), "\(updatedAnswer)")
    #expect(after["deep"] == Self.nested(70) && after.acl.writers == [userId], "\(updatedAnswer)")
    // A user's own fields.
    let (renamed, user) = try board.send(
      request(board, "PUT", "users/\(userId)", token, body: #"{"hobby":"go"}"#, wire: true))
    let renamedUser = try DataObject(wire: user)
    #expect(renamed == 200 && renamedUser["hobby"] == .string("go"), "\(user)")
    let (deleted, _) = try board.send(
      request(board, "DELETE", "classes/Note/\(object.objectId)", token, wire: true))
    #expect(deleted == 200)
    let (gone, _) = try board.send(
      request(board, "GET", "classes/Note/\(object.objectId)", token, wire: true))
    #expect(gone == 404)
  }

  @Test func anAppKeepsNCMBsShapeAndLimits() throws {
    let board = try ServedBoard()
    let (userId, token) = try board.signUp()
    for (body, status, code) in [
      (Self.deep, 400, "E400001"), (Self.big, 413, "E413002"),
    ] {
      let (answered, answer) = try board.send(
        request(board, "POST", "classes/Note", token, body: body, wire: false))
      #expect(answered == status && answer.objectValue?["code"] == .string(code), "\(answer)")
    }
    // The header widens only the engine's writes: NCMB's other paths keep 1 MiB.
    let (batch, batchAnswer) = try board.send(
      request(board, "POST", "batch", token, body: Self.big, wire: true))
    #expect(batch == 413, "\(batchAnswer)")
    let (created, answer) = try board.send(
      request(board, "POST", "classes/Note", token, body: #"{"n":1}"#, wire: false))
    #expect(created == 201 && answer.objectValue?.keys.sorted() == ["createDate", "objectId"])
    let objectId = answer.objectValue?["objectId"]?.stringValue ?? "?"
    let (updated, updatedAnswer) = try board.send(
      request(
        board, "PUT", "classes/Note/\(objectId)", token,
        body: #"{"n":{"__op":"Increment","amount":2}}"#, wire: false))
    #expect(updated == 200 && updatedAnswer.objectValue?.keys.sorted() == ["updateDate"])
    let (renamed, user) = try board.send(
      request(board, "PUT", "users/\(userId)", token, body: #"{"hobby":"go"}"#, wire: false))
    #expect(renamed == 200 && user.objectValue?.keys.sorted() == ["updateDate"], "\(user)")
    let (deleted, deletedAnswer) = try board.send(
      request(board, "DELETE", "classes/Note/\(objectId)", token, wire: false))
    #expect(deleted == 200 && deletedAnswer == .object([:]), "\(deletedAnswer)")
  }
}
