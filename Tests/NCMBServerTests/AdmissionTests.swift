import Foundation
import Testing

@testable import Datastore
@testable import NCMBServer

/// The pipeline's first stages (limits → signature → session) come before a request waits for
/// a write; and a multipart body is read as any correct encoder may write it.
@Suite("NCMB admission and multipart")
struct AdmissionTests {
  /// Badly signed writes, and writes naming a session that does not exist, are answered while
  /// an honest write waits for the database's lock: they never join the write queue, so they
  /// neither wait in its batches nor slow them.
  @Test func badlySignedWritesNeverQueue() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    let writers = try #require(board.service.writers)
    let lock = try Connection(path: board.database.ownerLocation)
    try lock.execute("BEGIN IMMEDIATE")
    let honest = DispatchSemaphore(value: 0)
    let request = board.request(
      "POST", "classes/Thread", session: token, body: #"{"title":"t","description":""}"#)
    DispatchQueue.global().async {
      _ = board.service.respond(to: request)
      honest.signal()
    }
    let deadline = Date().addingTimeInterval(60)
    while !writers.state.writing && Date() < deadline { usleep(1_000) }
    #expect(writers.state.writing, "the honest write holds the queue")
    let forged = board.request(
      "POST", "classes/Thread", session: token, body: #"{"title":"forged","description":""}"#,
      clientKey: "not-the-client-key")
    var unsigned = forged
    unsigned.headers.removeAll { $0.name == "x-ncmb-signature" }
    // Signed with the app's keys (every copy of the app holds them), with a made-up session.
    let stranger = board.request(
      "POST", "classes/Thread", session: "forged" + token,
      body: #"{"title":"forged","description":""}"#)
    let answered = DispatchGroup()
    let codes = Codes()
    for (index, request) in [forged, unsigned, stranger, forged, unsigned].enumerated() {
      answered.enter()
      DispatchQueue.global().async {
        let response = board.service.respond(to: request)
        codes.set(index, response.status)
        answered.leave()
      }
    }
    #expect(
      answered.wait(timeout: .now() + 60) == .success,
      "badly signed writes are answered while an honest one waits for the lock")
    #expect(codes.all == [401, 401, 401, 401, 401])
    #expect(writers.state.waiting == 0)
    try lock.execute("COMMIT")
    #expect(honest.wait(timeout: .now() + 60) == .success)
    #expect(writers.state.largestBatch == 1)
  }

  final class Codes: @unchecked Sendable {
    private let lock = NSLock()
    private var codes: [Int: Int] = [:]
    func set(_ index: Int, _ code: Int) { lock.withLock { codes[index] = code } }
    var all: [Int] { lock.withLock { codes.keys.sorted().map { codes[$0]! } } }
  }

  /// `GET forum/keys`, the one unsigned path, borrows no database connection (it would have
  /// no client address's place among them: `StorePool`'s fair admission); keys the owner
  /// rotates are published by the next signed request, which its old keys get refused.
  @Test func forumKeysBorrowNoConnection() throws {
    let board = try ServedBoard()
    var keysRequest = HTTPRequest(method: "GET", path: "/2013-09-01/forum/keys")
    keysRequest.clientAddress = "192.0.2.7"
    let lent = board.service.pool.lendings
    for _ in 0..<3 {
      let (status, body) = try board.send(keysRequest)
      #expect(status == 200, "\(body)")
      #expect(body.objectValue?["applicationKey"]?.stringValue == board.keys.applicationKey)
    }
    #expect(board.service.pool.lendings == lent, "GET forum/keys borrowed a connection")
    let rotated = try Datastore.open(board.database.ownerLocation).applicationKeys(rotate: true)
    board.passRecheckInterval()
    let (status, refusal) = try board.send(board.request("GET", "classes/Thread"))
    #expect(status == 404 && refusal.objectValue?["code"]?.stringValue == "E404005")
    let (_, body) = try board.send(keysRequest)
    #expect(body.objectValue?["applicationKey"]?.stringValue == rotated.applicationKey)
    #expect(body.objectValue?["clientKey"]?.stringValue == rotated.clientKey)
  }

  /// Refusals say what NCMB would, and why.
  @Test func refusalsSayWhy() throws {
    let board = try ServedBoard()
    func answer(_ request: HTTPRequest) throws -> (Int, String, String) {
      let (status, body) = try board.send(request)
      return (
        status, body.objectValue?["code"]?.stringValue ?? "",
        body.objectValue?["error"]?.stringValue ?? ""
      )
    }
    var (status, code, error) = try answer(
      board.request("POST", "classes/Thread", body: #"{"title":"t","description":""}"#))
    #expect(status == 401 && code == "E401001" && error.contains("Session-Token"), "\(error)")
    (status, code, error) = try answer(
      board.request("GET", "classes/Thread", clientKey: "not-the-client-key"))
    #expect(status == 401 && code == "E401001" && error.contains("Signature"), "\(error)")
    (status, code, error) = try answer(
      board.request("GET", "classes/Thread", session: "no-such-session-token"))
    #expect(status == 401 && code == "E401001" && error.contains("expired"), "\(error)")
    var stranger = board.request("GET", "classes/Thread")
    stranger.headers = stranger.headers.map {
      $0.name == "x-ncmb-application-key" ? ($0.name, "another-application") : $0
    }
    (status, code, error) = try answer(stranger)
    #expect(status == 404 && code == "E404005", "\(error)")
    (status, code, error) = try answer(
      board.request("GET", "classes/Thread", timestamp: "2001-01-01T00:00:00.000Z"))
    #expect(status == 401 && code == "E401001" && error.contains("Timestamp"), "\(error)")
    // A refused write says the engine's reason: a thread whose author may not write it.
    let (alice, token) = try board.signUp()
    (status, code, error) = try answer(
      board.request(
        "POST", "classes/Thread", session: token,
        body: #"{"title":"t","description":"","acl":{"*":{"read":true,"write":true}}}"#))
    #expect(status == 403 && code == "E403001", "\(error)")
    #expect(error.hasPrefix("No access with ACL. (") && !error.contains(alice), "\(error)")
  }

  /// `count=1&limit=0` (the Swift SDK's `count()`) counts and lists nothing; `limit=0` alone
  /// lists nothing.
  @Test func limitZero() throws {
    let board = try ServedBoard()
    let (_, token) = try board.signUp()
    _ = try board.send(
      board.request(
        "POST", "classes/Thread", session: token, body: #"{"title":"t","description":""}"#))
    var (status, body) = try board.send(
      board.request("GET", "classes/Thread", query: "count=1&limit=0", session: token))
    #expect(status == 200 && body == .object(["results": .array([]), "count": .int(1)]))
    (status, body) = try board.send(
      board.request("GET", "classes/Thread", query: "limit=0", session: token))
    #expect(status == 200 && body == .object(["results": .array([])]))
    (status, body) = try board.send(
      board.request("GET", "classes/Thread", query: "limit=-1", session: token))
    #expect(status == 400)
  }

  static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x2D, 0x2D]

  private func read(_ body: String, _ contentType: String) throws -> MultipartForm {
    let boundary = try #require(try MultipartForm.boundary(contentType: contentType))
    return try MultipartForm(Array(body.utf8), boundary: boundary)
  }

  /// Whatever a correct encoder may write.
  @Test func multipartAsEncodersWriteIt() throws {
    let crlf = "\r\n"
    // The Swift SDK: the acl as a file part, the epilogue CRLF.
    var form = try read(
      "--_B\r\nContent-Disposition: form-data; name=\"acl\"; filename=\"acl\"\r\n\r\n{}\r\n"
        + "--_B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jpg\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\nDATA\r\n--_B--\r\n\r\n",
      "multipart/form-data; boundary=_B")
    #expect(form.parts.map(\.name) == ["acl", "file"])
    #expect(form["acl"]?.fileName == "acl" && form["acl"]?.contentType == nil)
    #expect(form["file"].map { Array($0.bytes) } == Array("DATA".utf8))
    // A preamble, a quoted boundary followed by another parameter, padding after a delimiter,
    // a part with a filename and no Content-Type, an epilogue of text.
    form = try read(
      "This is a preamble." + crlf + "--a b\t " + crlf
        + "content-disposition: form-data; name=acl" + crlf + crlf + "{\"*\":{}}" + crlf
        + "--a b" + crlf + "Content-Disposition: form-data; filename=\"x\"; name=\"file\""
        + crlf + crlf + "--a bc" + crlf + "--a b--" + crlf + "epilogue" + crlf,
      "Multipart/Form-Data; boundary=\"a b\"; charset=utf-8")
    #expect(form["acl"].map { Array($0.bytes) } == Array("{\"*\":{}}".utf8))
    #expect(form["file"].map { Array($0.bytes) } == Array("--a bc".utf8))
    #expect(form["file"]?.contentType == nil && form["file"]?.fileName == "x")
    // The Android SDK: the file first, names unquoted.
    form = try read(
      "--1700000000000\r\nContent-Disposition: form-data; name=file; filename=a.png\r\n"
        + "Content-Type: image/png\r\n\r\nPNG\r\n--1700000000000\r\n"
        + "Content-Disposition: form-data; name=acl; filename=acl\r\n\r\n{}\r\n"
        + "--1700000000000--\r\n",
      "multipart/form-data; boundary=1700000000000")
    #expect(form["file"]?.contentType == "image/png" && form["acl"] != nil)
    // An empty part.
    form = try read(
      "--B\r\nContent-Disposition: form-data; name=\"acl\"\r\n\r\n\r\n--B--",
      "multipart/form-data; boundary=B")
    #expect(form["acl"]?.bytes.isEmpty == true)
  }

  @Test func malformedMultipartIsRefused() throws {
    for body in [
      "no delimiter at all", "--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nDATA",
      "--B\r\nContent-Type: text/plain\r\n\r\nDATA\r\n--B--", "--Bxyz",
    ] {
      #expect(throws: NCMBError.self, "\(body)") {
        _ = try MultipartForm(Array(body.utf8), boundary: Array("B".utf8))
      }
    }
    #expect(throws: NCMBError.self) {
      _ = try MultipartForm.boundary(contentType: "multipart/form-data")
    }
    #expect(try MultipartForm.boundary(contentType: "application/json") == nil)
  }
}
