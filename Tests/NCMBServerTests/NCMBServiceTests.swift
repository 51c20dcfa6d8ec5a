import Datastore
import EngineTestSupport
import Forum
import ForumCrypto
import HostileImages
import Testing

@testable import NCMBServer

#if canImport(Glibc)
  import Glibc
#endif

/// A board behind an `NCMBService`, and an app that signs its requests as an SDK does.
final class ServedBoard: @unchecked Sendable {
  let database: TestDatabase
  let service: NCMBService
  let keys: ApplicationKeys
  var now: Int64 = 1_800_000_000_000
  /// The server's clock: it moves only when a test moves it.
  let clock: Clock

  static let policy = NCMBPolicy(
    file: { _, bytes, mimeType in try Board.checkAppFile(bytes: bytes, mimeType: mimeType) },
    object: { className, fields, objectId, client in
      try Board.checkAppObject(
        className: className, fields: fields, objectId: objectId, client: client)
    })

  /// The server connects where `forum serve` would: the SQLite file, or a PostgreSQL role
  /// granted `forum_server` (never the owner, whom row-level security would not hold).
  init(_ engine: any EngineFixture = SQLiteFixture()) throws {
    database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
    _ = try Board.initialize(location: database.ownerLocation)
    let clock = Clock()
    self.clock = clock
    service = try NCMBService(
      location: try database.serverLocation(), policy: ServedBoard.policy, clock: { clock.now })
    keys = try service.keys()
  }

  final class Clock: @unchecked Sendable { var now = BackendDate.now() }

  /// Moves the server's clock past `NCMBService.recheckMilliseconds`: a write by another
  /// process (the prompt, sqlite3) is seen from then on.
  func passRecheckInterval() {
    clock.now += NCMBService.recheckMilliseconds
  }

  /// A request signed with the board's keys (or `clientKey`), as the Python SDK sends it: host
  /// with its port, a trailing slash, a local-time-free UTC timestamp.
  func request(
    _ method: String, _ path: String, query: String = "", session: String? = nil,
    body: String = "", clientKey: String? = nil, timestamp: String? = nil,
    formParts: [HTTPFormPart] = [], bodyBytes: [UInt8]? = nil
  ) -> HTTPRequest {
    let host = "127.0.0.1:8443"
    let fullPath = "/2013-09-01/" + path
    let time = timestamp ?? BackendDate.string(milliseconds: BackendDate.now())
    let string = NCMBSignature.stringToSign(
      method: method, host: host, path: fullPath, rawQuery: query,
      applicationKey: keys.applicationKey, timestamp: time)
    var headers: [(name: String, value: String)] = [
      ("host", host), ("x-ncmb-application-key", keys.applicationKey),
      ("x-ncmb-timestamp", time),
      ("x-ncmb-signature", NCMBSignature.sign(string, clientKey: clientKey ?? keys.clientKey)),
      ("content-type", formParts.isEmpty ? "application/json" : "multipart/form-data; boundary=B"),
    ]
    if let session { headers.append(("x-ncmb-apps-session-token", session)) }
    // Parts as a multipart encoder writes them: the handler reads the body.
    var multipart: [UInt8] = []
    for part in formParts {
      multipart += Array("--B\r\nContent-Disposition: form-data; name=\"\(part.name)\"".utf8)
      if let name = part.fileName { multipart += Array("; filename=\"\(name)\"".utf8) }
      if let type = part.contentType { multipart += Array("\r\nContent-Type: \(type)".utf8) }
      multipart += Array("\r\n\r\n".utf8) + part.bytes + Array("\r\n".utf8)
    }
    if !formParts.isEmpty { multipart += Array("--B--\r\n".utf8) }
    return HTTPRequest(
      method: method, path: fullPath, rawQuery: query, headers: headers,
      body: bodyBytes ?? (formParts.isEmpty ? Array(body.utf8) : multipart), formParts: formParts)
  }

  func send(_ request: HTTPRequest) throws -> (Int, JSONValue) {
    let response = service.respond(to: request)
    let text = String(decoding: response.body, as: UTF8.self)
    return (response.status, text.isEmpty ? .object([:]) : try JSONValue.parse(text))
  }

  /// Anonymous sign-up: the user's objectId and session token.
  func signUp() throws -> (String, String) {
    let uuid = "3F2504E0-4F89-11D3-9A0C-\(Int.random(in: 100_000_000_000...999_999_999_999))"
    let (status, body) = try send(
      request("POST", "users", body: #"{"authData":{"anonymous":{"id":"\#(uuid)"}}}"#))
    #expect(status == 201)
    return (
      body.objectValue?["objectId"]?.stringValue ?? "",
      body.objectValue?["sessionToken"]?.stringValue ?? ""
    )
  }
}

@Suite("NCMB API")
struct NCMBServiceTests {
  /// The REST documentation's example must verify with its keys and clock.
  @Test func theDocumentationsSignatureVerifies() throws {
    let keys = ApplicationKeys(
      applicationKey: "6145f91061916580c742f806bab67649d10f45920246ff459404c46f00ff3e56",
      clientKey: "1343d198b510a0315db1c03f3aa0e32418b7a743f8e4b47cbff670601345cf75")
    let request = HTTPRequest(
      method: "GET", path: "/2013-09-01/classes/TestClass",
      rawQuery: "where=%7B%22testKey%22%3A%22testValue%22%7D",
      headers: [
        ("host", "mbaas.api.nifcloud.com"), ("x-ncmb-application-key", keys.applicationKey),
        ("x-ncmb-timestamp", "2013-12-02T02:44:35.452Z"),
        ("x-ncmb-signature", "AltGkQgXurEV7u0qMd+87ud7BKuueldoCjaMgVc9Bes="),
      ])
    let time = try #require(NCMBSignature.milliseconds(ofTimestamp: "2013-12-02T02:44:35.452Z"))
    #expect(time == 1_385_952_275_452)
    try NCMBSignature.verify(request, keys: keys, now: time + 60_000)
    // Also with the port the Host header carries, which the Swift SDK leaves out of what it signs.
    var withPort = request
    withPort.headers[0] = ("host", "mbaas.api.nifcloud.com:443")
    try NCMBSignature.verify(withPort, keys: keys, now: time)
    // A stale timestamp, another query, another key: refused.
    #expect(throws: NCMBError.staleTimestamp) {
      try NCMBSignature.verify(
        request, keys: keys, now: time + NCMBSignature.allowedSkewMilliseconds + 1)
    }
    var other = request
    other.rawQuery = "where=%7B%22testKey%22%3A%22other%22%7D"
    #expect(throws: NCMBError.badSignature) {
      try NCMBSignature.verify(other, keys: keys, now: time)
    }
    let otherKeys = ApplicationKeys(applicationKey: keys.applicationKey, clientKey: "x")
    #expect(throws: NCMBError.badSignature) {
      try NCMBSignature.verify(request, keys: otherKeys, now: time)
    }
  }

  @Test func timestampsOfEverySDK() {
    #expect(NCMBSignature.milliseconds(ofTimestamp: "2013-12-02T02:44:35.452Z") != nil)
    #expect(NCMBSignature.milliseconds(ofTimestamp: "2026-12-01T08:14:22.203566") != nil)
    #expect(NCMBSignature.milliseconds(ofTimestamp: "2026-12-01T08:14:22") != nil)
    for bad in [
      "", "yesterday", "2026-13-01T08:14:22Z", "2026-12-01 08:14:22Z", "2026-12-01T08:14:22.Z",
      "2026-12-01T08:14:22.1234567890123456789012Z",
    ] {
      #expect(NCMBSignature.milliseconds(ofTimestamp: bad) == nil, "\(bad)")
    }
  }

  /// A `Z` timestamp may be off by a real time zone's offset, UTC−12 to UTC+14 with the
  /// half- and quarter-hour zones (±15 minutes): the iOS Objective-C SDK's local time labelled
  /// `Z` (India +5:30, Nepal +5:45, Adelaide +9:30, Newfoundland −3:30, Chatham +12:45…), the
  /// Android SDK's 12-hour clock; nothing else.
  @Test func timestampsOffByATimeZone() {
    let now = BackendDate.now()
    let hour: Int64 = 60 * 60 * 1000
    let minute: Int64 = 60 * 1000
    func fresh(_ off: Int64) -> Bool {
      NCMBSignature.isFresh(BackendDate.string(milliseconds: now + off), now: now)
    }
    for off in [
      0, 14 * minute, -14 * minute, 9 * hour, 9 * hour + 14 * minute, -10 * hour, 14 * hour,
      -14 * hour, -14 * hour - 14 * minute, 12 * hour, 6 * hour - 14 * minute,
      5 * hour + 30 * minute, 5 * hour + 45 * minute, 9 * hour + 30 * minute,
      -(3 * hour + 30 * minute), -(9 * hour + 30 * minute), 12 * hour + 45 * minute,
      13 * hour + 45 * minute + 14 * minute, 4 * hour + 30 * minute - 14 * minute,
    ] {
      #expect(fresh(off), "\(off / minute) minutes")
    }
    for off in [
      16 * minute, -16 * minute, 7 * hour + 16 * minute, 7 * hour + 44 * minute, 15 * hour,
      -15 * hour, 14 * hour + 16 * minute, 100 * hour, -(4 * hour + 30 * minute),
      2 * hour + 30 * minute,
    ] {
      #expect(!fresh(off), "\(off / minute) minutes")
    }
    // Percent-encoded (Android, Unity): the same rule on the decoded text.
    let tokyo = BackendDate.string(milliseconds: now + 9 * hour)
    let encoded = tokyo.map { $0 == ":" ? "%3A" : String($0) }.joined()
    #expect(encoded.contains("%3A") && NCMBSignature.isFresh(encoded, now: now))
  }

  /// A thread naming a picture that was never uploaded (or that the caller may not read) is
  /// refused saying which file, not a bare "not found", and nothing is written.
  @Test(arguments: EngineFixtures.all)
  func aThreadNamingAMissingPictureSaysWhich(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    var (status, body) = try board.send(
      board.request(
        "POST", "classes/Thread", session: token,
        body: #"{"title":"Lost","description":"where is it","fileName":"nowhere.png"}"#))
    #expect(status == 404)
    #expect(body.objectValue?["code"] == .string("E404001"))
    let error = body.objectValue?["error"]?.stringValue ?? ""
    #expect(error.contains("no file named nowhere.png"), "\(body)")
    (status, body) = try board.send(board.request("GET", "classes/Thread", session: token))
    #expect(body.objectValue?["results"] == .array([]))
  }

  /// A thread naming a stored file that is not a picture (one an import or another program put
  /// there) is refused as media the board cannot read (E415001, saying why), not a server error.
  @Test(arguments: EngineFixtures.all)
  func aThreadNamingAFileThatIsNoPictureIsRefusedAsMedia(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    let store = try Datastore.open(board.database.location(as: "carol"))
    let carol = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    _ = try carol.putFile(
      name: "minutes.pdf", bytes: Array("%PDF-1.4 not a picture".utf8),
      mimeType: "application/pdf", acl: ACL(readers: ["*"], writers: []))
    board.passRecheckInterval()
    var (status, body) = try board.send(
      board.request(
        "POST", "classes/Thread", session: token,
        body: #"{"title":"Minutes","description":"attached","fileName":"minutes.pdf"}"#))
    #expect(status == 415, "\(body)")
    #expect(body.objectValue?["code"] == .string("E415001"))
    (status, body) = try board.send(board.request("GET", "classes/Thread", session: token))
    #expect(body.objectValue?["results"] == .array([]))
  }

  /// What the seed app does, call by call.
  @Test(arguments: EngineFixtures.all)
  func theSeedAppsFlow(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (alice, aliceToken) = try board.signUp()
    let (_, bobToken) = try board.signUp()

    var (status, body) = try board.send(
      board.request("GET", "classes/Todo/", query: "limit=1", session: aliceToken))
    #expect(status == 200)
    #expect(body == .object(["results": .array([])]))

    // The seed app's ACL, on the picture as on the thread: the thread's author must be able
    // to delete the picture with the thread.
    let acl = #"{"*":{"read":true},"\#(alice)":{"read":true,"write":true}}"#
    let png = PNGImages.honest(width: 8, height: 8)
    (status, body) = try board.send(
      board.request(
        "POST", "files/picture.png", session: aliceToken,
        formParts: [
          HTTPFormPart(name: "acl", bytes: Array(acl.utf8)),
          HTTPFormPart(name: "file", fileName: "picture.png", contentType: "image/png", bytes: png),
        ]))
    #expect(status == 201, "\(body)")
    let response = board.service.respond(
      to: board.request("GET", "files/picture.png", session: bobToken))
    #expect(response.status == 200)
    #expect(response.body == png)

    (status, body) = try board.send(
      board.request(
        "POST", "classes/Thread/", session: aliceToken,
        body:
          #"{"title":"From the app","description":"hello","fileName":"picture.png","acl":\#(acl)}"#)
    )
    #expect(status == 201, "\(body)")
    let threadId = try #require(body.objectValue?["objectId"]?.stringValue)

    (status, body) = try board.send(board.request("GET", "classes/Thread", session: bobToken))
    let thread = try #require(body.objectValue?["results"]?.arrayValue?.first?.objectValue)
    #expect(thread["title"] == .string("From the app"))
    #expect(thread["number"] == .int(1))
    #expect(thread["user"]?.pointerId == alice)
    #expect(thread["image"]?.objectValue?["width"] == .int(8))
    #expect(thread["acl"] == (try JSONValue.parse(acl)))

    let pointer = #"{"__type":"Pointer","className":"Thread","objectId":"\#(threadId)"}"#
    (status, body) = try board.send(
      board.request(
        "POST", "classes/Comment", session: bobToken, body: #"{"text":"nice","thread":\#(pointer)}"#
      ))
    #expect(status == 201, "\(body)")
    let commentId = try #require(body.objectValue?["objectId"]?.stringValue)

    let whereThread = "where=" + percentEncoded(#"{"thread":\#(pointer)}"#)
    (status, body) = try board.send(
      board.request("GET", "classes/Comment", query: "count=1&" + whereThread, session: aliceToken))
    #expect(status == 200)
    #expect(body.objectValue?["count"] == .int(1))
    #expect(body.objectValue?["results"]?.arrayValue?.first?.objectValue?["number"] == .int(1))

    // Someone else's comment cannot be deleted; your own can.
    (status, body) = try board.send(
      board.request("DELETE", "classes/Comment/\(commentId)", session: aliceToken))
    #expect(status == 403)
    #expect(body.objectValue?["code"] == .string("E403001"))
    (status, _) = try board.send(
      board.request("DELETE", "classes/Comment/\(commentId)/", session: bobToken, body: "{}"))
    #expect(status == 200)

    // The board sees the app's thread with its number, author and picture.
    let store = try Datastore.open(board.database.location(as: "carol"))
    let reader = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let threads = try reader.find(Query(className: "Thread"))
    #expect(threads.count == 1)
    #expect(threads.first?["commentCount"] == .int(0))
  }

  /// NCMB's file update (`PUT /files/NAME` with `{"acl":…}`): the writer alone changes the ACL,
  /// the new ACL decides who reads the file from then on, and nothing else of a file changes.
  @Test(arguments: EngineFixtures.all)
  func aFilesACLIsChangedByItsWriterOnly(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (alice, aliceToken) = try board.signUp()
    let (_, bobToken) = try board.signUp()
    let png = PNGImages.honest(width: 4, height: 4)
    let publicACL = #"{"*":{"read":true},"\#(alice)":{"read":true,"write":true}}"#
    let filePart = HTTPFormPart(
      name: "file", fileName: "shared.png", contentType: "image/png", bytes: png)
    var (status, body) = try board.send(
      board.request(
        "POST", "files/shared.png", session: aliceToken,
        formParts: [
          HTTPFormPart(name: "acl", bytes: Array(publicACL.utf8)),
          HTTPFormPart(name: "file", fileName: "shared.png", contentType: "image/png", bytes: png),
        ]))
    #expect(status == 201, "\(body)")
    func fetch(_ token: String) -> HTTPResponse {
      board.service.respond(to: board.request("GET", "files/shared.png", session: token))
    }
    #expect(fetch(bobToken).status == 200)

    let privateACL = #"{"acl":{"\#(alice)":{"read":true,"write":true}}}"#
    (status, body) = try board.send(
      board.request("PUT", "files/shared.png", session: bobToken, body: privateACL))
    #expect(status == 403, "\(body)")
    #expect(body.objectValue?["code"] == .string("E403001"))
    #expect(fetch(bobToken).status == 200, "a refused change changes nothing")

    let before = try board.database.fingerprint()
    let refusals: [(String, HTTPRequest, Int, String)] = [
      (
        "no acl", board.request("PUT", "files/shared.png", session: aliceToken, body: "{}"), 400,
        "E400003"
      ),
      (
        "a bad acl",
        board.request(
          "PUT", "files/shared.png", session: aliceToken, body: #"{"acl":{"*":{"read":"yes"}}}"#),
        400, "E400002"
      ),
      (
        "another field",
        board.request(
          "PUT", "files/shared.png", session: aliceToken,
          body: #"{"acl":{"*":{"read":true}},"mimeType":"text/html"}"#), 400, "E400002"
      ),
      (
        "malformed JSON",
        board.request("PUT", "files/shared.png", session: aliceToken, body: #"{"acl":"#), 400,
        "E400001"
      ),
      (
        "a missing file",
        board.request("PUT", "files/nothing.png", session: aliceToken, body: privateACL), 404,
        "E404001"
      ),
      (
        "no session", board.request("PUT", "files/shared.png", body: privateACL), 403, "E403001"
      ),
      // The Unity SDK's multipart PUT: without an acl part, or by someone who may not write.
      (
        "multipart without an acl",
        board.request(
          "PUT", "files/shared.png", session: aliceToken,
          formParts: [filePart]), 400, "E400003"
      ),
      (
        "multipart by another",
        board.request(
          "PUT", "files/shared.png", session: bobToken,
          formParts: [
            filePart,
            HTTPFormPart(name: "acl", bytes: Array(#"{"*":{"read":true,"write":true}}"#.utf8)),
          ]), 403, "E403001"
      ),
    ]
    for (name, request, expectedStatus, code) in refusals {
      let (answered, answer) = try board.send(request)
      #expect(answered == expectedStatus, "\(name): \(answer)")
      #expect(answer.objectValue?["code"] == .string(code), "\(name): \(answer)")
    }
    #expect(try board.database.fingerprint() == before, "refusals store nothing")

    (status, body) = try board.send(
      board.request("PUT", "files/shared.png/", session: aliceToken, body: privateACL))
    #expect(status == 200, "\(body)")
    #expect(body.objectValue?["updateDate"]?.stringValue?.hasSuffix("Z") == true, "\(body)")
    #expect(fetch(bobToken).status == 404, "bob no longer reads it")
    let mine = fetch(aliceToken)
    #expect(mine.status == 200)
    #expect(mine.body == png, "the bytes are unchanged")
    // Back to public: bob reads it again.
    (status, body) = try board.send(
      board.request(
        "PUT", "files/shared.png", session: aliceToken, body: #"{"acl":\#(publicACL)}"#))
    #expect(status == 200, "\(body)")
    #expect(fetch(bobToken).status == 200)
  }

  /// NCMB never answered an app a user's `authData`: an anonymous user's id signs in as that
  /// user. Hidden however deep a user is included (`include=thread.user`), in a find and a get.
  @Test(arguments: EngineFixtures.all)
  func noIncludeShowsAUsersAuthData(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let uuid = "3F2504E0-4F89-11D3-9A0C-0305E82C3302"
    let (status, body) = try board.send(
      board.request("POST", "users", body: #"{"authData":{"anonymous":{"id":"\#(uuid)"}}}"#))
    #expect(status == 201, "\(body)")
    let alice = try #require(body.objectValue?["objectId"]?.stringValue)
    let aliceToken = try #require(body.objectValue?["sessionToken"]?.stringValue)
    let (_, bobToken) = try board.signUp()
    func created(_ className: String, _ token: String, _ fields: String) throws -> String {
      let (status, body) = try board.send(
        board.request("POST", "classes/" + className, session: token, body: fields))
      #expect(status == 201, "\(body)")
      return try #require(body.objectValue?["objectId"]?.stringValue)
    }
    let user = #"{"__type":"Pointer","className":"user","objectId":"\#(alice)"}"#
    let threadId = try created("Thread", aliceToken, #"{"title":"t","user":\#(user)}"#)
    let thread = #"{"__type":"Pointer","className":"Thread","objectId":"\#(threadId)"}"#
    let commentId = try created("Comment", bobToken, #"{"text":"c","thread":\#(thread)}"#)

    for (path, query) in [
      ("classes/Comment", "include=thread.user"), ("classes/Comment", "include=thread,thread.user"),
      ("classes/Comment/\(commentId)", "include=thread.user"), ("classes/Thread", "include=user"),
      ("classes/Thread/\(threadId)", "include=user"), ("users/\(alice)", ""), ("users", ""),
    ] {
      let response = board.service.respond(
        to: board.request("GET", path, query: query, session: bobToken))
      let text = String(decoding: response.body, as: UTF8.self)
      #expect(response.status == 200, "\(path)?\(query): \(text)")
      #expect(!text.contains(uuid), "\(path)?\(query): \(text)")
      #expect(!text.contains("authData"), "\(path)?\(query): \(text)")
      #expect(text.contains(alice), "\(path)?\(query): the user is there")
    }
    // The user two levels down is included, as NCMB includes it.
    let (_, found) = try board.send(
      board.request("GET", "classes/Comment", query: "include=thread.user", session: bobToken))
    let included = found.objectValue?["results"]?.arrayValue?.first?.objectValue?["thread"]?
      .objectValue?["user"]?.objectValue
    #expect(included?["__type"] == .string("Object"))
    #expect(included?["objectId"] == .string(alice))
  }

  /// `DELETE /users/ID` of yourself: refused for anyone else (E403001) and without a session;
  /// your session ends, your user is gone, your posts stay, and your anonymous id signs up as a
  /// new user.
  @Test(arguments: EngineFixtures.all)
  func anAppUserDeletesItsOwnUser(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let uuid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    let signUp = #"{"authData":{"anonymous":{"id":"\#(uuid)"}}}"#
    var (status, body) = try board.send(board.request("POST", "users", body: signUp))
    #expect(status == 201, "\(body)")
    let alice = try #require(body.objectValue?["objectId"]?.stringValue)
    let aliceToken = try #require(body.objectValue?["sessionToken"]?.stringValue)
    let (_, bobToken) = try board.signUp()
    (status, body) = try board.send(
      board.request("POST", "classes/Thread", session: aliceToken, body: #"{"title":"stays"}"#))
    #expect(status == 201, "\(body)")

    let before = try board.database.fingerprint()
    (status, body) = try board.send(board.request("DELETE", "users/\(alice)", session: bobToken))
    #expect(status == 403, "\(body)")
    #expect(body.objectValue?["code"] == .string("E403001"))
    (status, body) = try board.send(board.request("DELETE", "users/\(alice)"))
    #expect(status == 401, "\(body)")
    #expect(try board.database.fingerprint() == before, "refusals change nothing")

    (status, body) = try board.send(
      board.request("DELETE", "users/\(alice)/", session: aliceToken, body: "{}"))
    #expect(status == 200, "\(body)")
    (status, body) = try board.send(board.request("GET", "classes/Thread", session: aliceToken))
    #expect(status == 401, "the session ended: \(body)")
    (status, body) = try board.send(board.request("GET", "users/\(alice)", session: bobToken))
    #expect(status == 404, "\(body)")
    (status, body) = try board.send(board.request("GET", "classes/Thread", session: bobToken))
    #expect(body.objectValue?["results"]?.arrayValue?.count == 1, "the post stays: \(body)")

    (status, body) = try board.send(board.request("POST", "users", body: signUp))
    #expect(status == 201, "the same anonymous id signs up anew: \(body)")
    let again = try #require(body.objectValue?["objectId"]?.stringValue)
    #expect(again != alice)
    (status, body) = try board.send(
      board.request(
        "GET", "classes/Thread",
        session: try #require(body.objectValue?["sessionToken"]?.stringValue)))
    #expect(status == 200, "\(body)")
  }

  /// The board's file removed under a running server: every request is `E500001` from then
  /// on, reads kept from before included (the file is looked at on every request, though the
  /// database's state is not), and no new empty board appears where it was.
  @Test func theDatabaseRemovedUnderTheServerIsE500001() throws {
    let board = try ServedBoard(SQLiteFixture())
    let (_, token) = try board.signUp()
    for _ in 0..<2 {
      #expect(try board.send(board.request("GET", "classes/Thread", session: token)).0 == 200)
    }
    let path = board.database.ownerLocation
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
    for _ in 0..<3 {
      for request in [
        board.request("GET", "classes/Thread", session: token),
        board.request("POST", "classes/Thread", session: token, body: #"{"title":"lost"}"#),
      ] {
        let (status, body) = try board.send(request)
        #expect(status == 500, "\(request.method): \(body)")
        #expect(body.objectValue?["code"] == .string("E500001"), "\(body)")
      }
    }
    #expect(access(path, F_OK) != 0, "no new board is made at \(path)")
  }

  /// A method a path does not take is `E405001` (HTTP 405), as NCMB answered, and stores nothing.
  @Test(arguments: EngineFixtures.all)
  func aMethodAPathDoesNotTakeIsE405001(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    let id = "abcdefghijklmnop"
    let before = try board.database.fingerprint()
    for (method, path) in [
      ("PUT", "classes/Todo"), ("DELETE", "classes/Todo"), ("POST", "classes/Todo/\(id)"),
      ("PATCH", "classes/Todo/\(id)"), ("PUT", "users"), ("DELETE", "users"),
      ("POST", "users/\(id)"), ("DELETE", "login"), ("PUT", "logout"), ("POST", "roles"),
      ("PATCH", "files/a.png"), ("OPTIONS", "files/a.png"), ("POST", "files"), ("PUT", "files/"),
      ("DELETE", "files"),
    ] {
      let (status, body) = try board.send(
        board.request(method, path, session: token, body: "{}"))
      #expect(status == 405, "\(method) \(path): \(body)")
      #expect(body.objectValue?["code"] == .string("E405001"), "\(method) \(path): \(body)")
    }
    #expect(try board.database.fingerprint() == before)
  }

  /// Every bad input is the right NCMB error and stores nothing.
  @Test(arguments: EngineFixtures.all)
  func badInputIsRefusedAndStoresNothing(engine: any EngineFixture) throws {
    let board = try ServedBoard(engine)
    let (_, token) = try board.signUp()
    let before = try board.database.fingerprint()
    let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
    var unsigned = board.request("GET", "classes/Thread")
    unsigned.headers.removeAll { $0.name == "x-ncmb-signature" }
    var unknownApp = board.request("GET", "classes/Thread")
    unknownApp.headers = unknownApp.headers.map {
      $0.name == "x-ncmb-application-key" ? ($0.name, String(repeating: "0", count: 64)) : $0
    }
    let stale = BackendDate.string(milliseconds: BackendDate.now() - 16 * 60 * 1000)
    let big = [UInt8](repeating: 0x41, count: 5 * 1024 * 1024 + 1)
    let cases: [(String, HTTPRequest, Int, String)] = [
      ("missing signature", unsigned, 401, "E401001"),
      ("bad signature", board.request("GET", "classes/Thread", clientKey: "wrong"), 401, "E401001"),
      ("unknown application key", unknownApp, 404, "E404005"),
      ("stale timestamp", board.request("GET", "classes/Thread", timestamp: stale), 401, "E401001"),
      (
        "forged session",
        board.request("POST", "classes/Todo", session: "forged" + token, body: "{}"), 401, "E401001"
      ),
      (
        "malformed JSON", board.request("POST", "classes/Todo", session: token, body: "{\"a\":"),
        400, "E400001"
      ),
      (
        "nesting", board.request("POST", "classes/Todo", session: token, body: #"{"a":\#(deep)}"#),
        400, "E400001"
      ),
      (
        "invalid UTF-8",
        board.request(
          "POST", "classes/Todo", session: token,
          bodyBytes: Array(#"{"a":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)),
        400, "E400001"
      ),
      (
        "file over 5 MB",
        board.request(
          "POST", "files/big.png", session: token,
          formParts: [HTTPFormPart(name: "file", contentType: "image/png", bytes: big)]),
        413, "E413001"
      ),
      (
        "not an image",
        board.request(
          "POST", "files/x.png", session: token,
          formParts: [
            HTTPFormPart(name: "file", contentType: "image/png", bytes: Array("hello".utf8))
          ]),
        415, "E415001"
      ),
      (
        "an image too large to decode",
        board.request(
          "POST", "files/x.png", session: token,
          formParts: [
            HTTPFormPart(
              name: "file", contentType: "image/png",
              bytes: PNGImages.honest(width: ImagePreparer.maximumSide + 1, height: 1))
          ]),
        415, "E415001"
      ),
      (
        "file name with ..",
        board.request(
          "POST", "files/..", session: token,
          formParts: [HTTPFormPart(name: "file", bytes: PNGImages.honest(width: 2, height: 2))]),
        400, "E400002"
      ),
      (
        "file name with %2F",
        board.request(
          "POST", "files/a%2Fb.png", session: token,
          formParts: [HTTPFormPart(name: "file", bytes: PNGImages.honest(width: 2, height: 2))]),
        400, "E400002"
      ),
      (
        "file name with NUL",
        board.request(
          "POST", "files/a%00b.png", session: token,
          formParts: [HTTPFormPart(name: "file", bytes: PNGImages.honest(width: 2, height: 2))]),
        400, "E400002"
      ),
      (
        "unknown operator",
        board.request(
          "GET", "classes/Thread", query: "where=" + percentEncoded(#"{"title":{"$where":"1"}}"#)),
        400, "E400002"
      ),
      (
        "a regex option NCMB had not",
        board.request(
          "GET", "classes/Thread",
          query: "where=" + percentEncoded(#"{"title":{"$regex":"a","$options":"q"}}"#)), 400,
        "E400002"
      ),
      (
        "huge limit", board.request("GET", "classes/Thread", query: "limit=1000000000"), 400,
        "E400002"
      ),
      ("negative skip", board.request("GET", "classes/Thread", query: "skip=-1"), 400, "E400002"),
      (
        "a managed field",
        board.request("POST", "classes/Thread", session: token, body: #"{"title":"t","number":5}"#),
        400, "E400002"
      ),
      (
        "a title too long",
        board.request(
          "POST", "classes/Thread", session: token,
          body: #"{"title":"\#(String(repeating: "x", count: 201))"}"#), 400, "E400002"
      ),
      (
        "a thread without a session",
        board.request("POST", "classes/Thread", body: #"{"title":"t"}"#), 401, "E401001"
      ),
      ("login", board.request("GET", "login", query: "userName=a&password=b"), 401, "E401002"),
      (
        "a body over the limit",
        board.request(
          "POST", "classes/Todo", session: token,
          body: #"{"a":"\#(String(repeating: "x", count: NCMBService.maximumJSONBytes))"}"#),
        413, "E413002"
      ),
    ]
    for (name, request, status, code) in cases {
      let (answered, body) = try board.send(request)
      #expect(answered == status, "\(name): \(body)")
      #expect(body.objectValue?["code"] == .string(code), "\(name): \(body)")
    }
    #expect(try board.database.fingerprint() == before)
  }
}

/// What `urllib.parse.quote(text, safe="")` gives.
func percentEncoded(_ text: String) -> String {
  var out = ""
  for byte in text.utf8 {
    let unreserved =
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
      || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
      || byte == UInt8(ascii: "~")
    out += unreserved ? String(UnicodeScalar(byte)) : "%" + Crypto.hex([byte]).uppercased()
  }
  return out
}

extension JSONValue {
  var arrayValue: [JSONValue]? {
    if case .array(let values) = self { return values }
    return nil
  }
}
