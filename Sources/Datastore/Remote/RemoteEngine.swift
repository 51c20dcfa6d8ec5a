import ForumCrypto
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// What an https board's certificate is checked against, beside the system's authorities.
@_spi(Tools) public enum RemoteTrust {
  /// A private authority's PEM file for every https board this process opens, in place of
  /// `FORUM_CA_FILE`: for tests, which must not `setenv` while other threads start processes
  /// (Foundation's `Process.run` copies `environ` as `setenv` moves it).
  public static let authorityFile = Mutex<String?>(nil)
}

/// The engine of a board that a `forum serve` holds (`--db https://HOST[:PORT]/`): an HTTPS
/// client of the server's NCMB API where NCMB has the call (finding, counting, getting, creating,
/// updating and deleting objects, files, users and logins, as NCMB's REST API asks them,
/// answered in the board's wire shape: `X-Forum-Wire: 1`) and of the board's own endpoints
/// under `/2013-09-01/forum/NAME` for the rest (`ForumExtensionsController`), every request
/// signed with the application keys the server gives forum clients (`GET forum/keys`, which
/// identify an application, not a person) and carrying the member's session. The server runs
/// each call as that session's user, through its own engine, so every rule holds there: this
/// engine only asks. A write of several steps is one request (`perform`); no transaction
/// crosses the wire. The values cross in the board's wire format (`Sources/Datastore/Wire`).
final class RemoteEngine: DatastoreEngine {
  let location: String
  private(set) var boardId = ""
  private(set) var rules = EngineRules()
  private let http: HTTPSClient
  /// `https://host:port` and the authority the signature names.
  private let origin: String
  private let authority: String
  private var keys = ApplicationKeys(applicationKey: "", clientKey: "")
  /// The session last signed in or resumed: what a request made for no one in particular
  /// carries (the clock, the feed's wake-up).
  private var sessionToken: String?
  /// Each signed-in user's session: a request made as a caller carries the caller's.
  private var tokens: [String: String] = [:]

  /// What the profile kept of its session's answer, offered before the session is resumed
  /// (`Datastore.signIn`): `caller(sessionToken:)` of that session then asks nothing.
  var keptAnswer: KeptSessionAnswer?
  /// The session's answer last given (`forum/session`) or resumed, for the profile to keep.
  private(set) var latestAnswer: KeptSessionAnswer?
  /// Keeps an answer asked for again because the kept one had changed.
  var answerChanged: ((KeptSessionAnswer) throws -> Void)?
  /// Keeps keys asked for again because the kept ones were rotated.
  var keysChanged: ((RemoteBoardKeys) throws -> Void)?
  /// Signs in again with the profile's secret when a resumed session turns out to have ended.
  var signInAgain: (() throws -> Login)?
  /// The tag of the kept answer the session was resumed with, until the server confirms it:
  /// sent with the next request made as that session's caller.
  private var unconfirmedTag: String?
  /// Each user's principals and user object as the session's answer last said them.
  private var answers: [String: (principals: Principals, user: DataObject)] = [:]

  /// The ended session is sent no more (a sign-up carrying it would be refused).
  private func forgetSession() {
    tokens = tokens.filter { $0.value != sessionToken }
    sessionToken = nil
  }

  private func unconfirmed(for caller: Principals?) -> String? {
    guard let unconfirmedTag, let caller, token(for: caller) == sessionToken else { return nil }
    return unconfirmedTag
  }

  /// The session's answer now, in place of a kept one the server said has changed (or not yet
  /// confirmed when a decision needs it), kept for the next command.
  private func askAgain() throws {
    unconfirmedTag = nil
    do {
      _ = try session()
    } catch let error as DatastoreError where error.code == .authentication {
      // The session has ended: a new one, whose answer is kept with it.
      guard let signInAgain else { throw error }
      forgetSession()
      _ = try signInAgain()
      return
    }
    if let latestAnswer { try answerChanged?(latestAnswer) }
  }

  private func token(for caller: Principals?) -> String? {
    guard let caller else { return sessionToken }
    return caller.userId.flatMap { tokens[$0] }
  }

  /// Opens `https://HOST[:PORT][/]`: with `kept` (what the profile kept of this board from an
  /// earlier command) no request is made; otherwise asks the server for its keys and board id.
  init(url: String, kept: RemoteBoardKeys? = nil) throws {
    guard let parsed = RemoteEngine.parse(url) else {
      throw DatastoreError(
        .systemError,
        detail: "\(Wire.printable(url, limit: 200)) is not a board's address: https://HOST[:PORT]/")
    }
    (origin, authority) = parsed
    location = origin + "/"
    var http = HTTPSClient(server: authority)
    if let caFile = RemoteTrust.authorityFile.withLock({ $0 })
      ?? getenv("FORUM_CA_FILE").map({ String(cString: $0) }), !caFile.isEmpty
    {
      guard access(caFile, R_OK) == 0 else {
        throw DatastoreError(
          .systemError, detail: "FORUM_CA_FILE \(caFile) cannot be read")
      }
      http.caFile = caFile
    }
    self.http = http
    if let kept, RemoteEngine.isBoards(kept) {
      keys = ApplicationKeys(applicationKey: kept.applicationKey, clientKey: kept.clientKey)
      boardId = kept.boardId
    } else {
      try fetchKeys()
    }
  }

  /// A request refused as from an unknown application (`E404005`: the keys kept in the
  /// profile, or those just fetched, were rotated by `forum keys --rotate`) asks for the keys
  /// again and is sent again, once a process.
  private var mayAskKeysAgain = true

  /// The board's id and keys as this engine signs with them, for the profile to keep.
  var boardKeys: RemoteBoardKeys {
    RemoteBoardKeys(
      boardId: boardId, applicationKey: keys.applicationKey, clientKey: keys.clientKey)
  }

  /// `GET forum/keys` (unsigned).
  private func fetchKeys() throws {
    let answer = try call("GET", "forum/keys", signed: false)
    let object = try wireObject(answer, "keys")
    let fetched = RemoteBoardKeys(
      boardId: try object.string("boardId"), applicationKey: try object.string("applicationKey"),
      clientKey: try object.string("clientKey"))
    guard RemoteEngine.isBoards(fetched) else {
      throw http.failure("it sent keys that are not a board's")
    }
    keys = ApplicationKeys(applicationKey: fetched.applicationKey, clientKey: fetched.clientKey)
    boardId = fetched.boardId
  }

  /// Keys and an id such as a board's server sends (kept ones were checked when fetched, but
  /// the profile is a file).
  private static func isBoards(_ kept: RemoteBoardKeys) -> Bool {
    let boardId = kept.boardId
    return
      (Validation.isSecret(boardId) || Validation.isObjectId(boardId)
      || boardId.allSatisfy(\.isASCII))
      && !boardId.isEmpty && boardId.count <= 64
      && kept.applicationKey.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
      && kept.clientKey.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
      && !kept.applicationKey.isEmpty && !kept.clientKey.isEmpty
  }

  /// (`https://host:port`, `host:port`) of a URL with nothing after its path's `/`.
  static func parse(_ url: String) -> (String, String)? {
    guard url.lowercased().hasPrefix("https://") else { return nil }
    var rest = url.dropFirst("https://".count)
    if rest.hasSuffix("/") { rest = rest.dropLast() }
    guard !rest.isEmpty, !rest.contains("/"), !rest.contains("@"), !rest.contains("?"),
      !rest.contains("#"), rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
    else { return nil }
    return ("https://" + rest, String(rest))
  }

  // MARK: Requests

  /// One request to `/2013-09-01/PATH`; the answer's JSON, or the refusal it says as the
  /// `DatastoreError` the server's engine threw.
  @discardableResult
  private func call(
    as caller: Principals? = nil, _ method: String, _ path: String, query: String = "",
    body: JSONValue? = nil,
    signed: Bool = true, timeoutSeconds: Double? = nil
  ) throws -> JSONValue {
    try parsed(
      try send(
        as: caller, method, path, query: query, body: body.map { $0.jsonBytes() } ?? [],
        contentType: body == nil ? nil : "application/json", signed: signed,
        timeoutSeconds: timeoutSeconds))
  }

  private func parsed(_ response: HTTPSClient.Response) throws -> JSONValue {
    guard !response.body.isEmpty else { return .object([:]) }
    do {
      return try Wire.parse(response.body)
    } catch {
      throw http.failure("its answer is not the board's JSON (HTTP \(response.status))")
    }
  }

  private func send(
    as caller: Principals? = nil, _ method: String, _ path: String, query: String = "",
    body: [UInt8] = [],
    contentType: String? = nil, signed: Bool = true, timeoutSeconds: Double? = nil
  ) throws -> HTTPSClient.Response {
    let fullPath = "/\(apiVersion)/" + path
    // NCMB's calls answer this engine in the board's wire shape; the board's own always do.
    var headers = ["X-Forum-Wire: 1"]
    if let contentType { headers.append("Content-Type: " + contentType) }
    if signed {
      let timestamp = BackendDate.string(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
      let signature = RequestSignature.sign(
        method: method, host: authority, path: fullPath, rawQuery: query,
        applicationKey: keys.applicationKey, clientKey: keys.clientKey, timestamp: timestamp)
      headers += [
        "X-NCMB-Application-Key: " + keys.applicationKey, "X-NCMB-Timestamp: " + timestamp,
        "X-NCMB-Signature: " + signature,
      ]
      if let token = token(for: caller) { headers.append("X-NCMB-Apps-Session-Token: " + token) }
    }
    // The first request made as the caller of a session resumed from a kept answer carries
    // its tag: the server refuses it, doing nothing, when the answer is no longer the
    // session's (`SessionWire`).
    let tagged = signed && caller != nil ? unconfirmed(for: caller) : nil
    if let tagged { headers.append(SessionWire.tagHeader + ": " + tagged) }
    let url = origin + fullPath + (query.isEmpty ? "" : "?" + query)
    let response = try http.send(
      method, url, headers: headers, body: body, timeoutSeconds: timeoutSeconds)
    if tagged != nil {
      // Refused before anything was done: the answer now, or a new session, then once again.
      if RemoteEngine.hasCode(response, status: SessionWire.changedStatus, SessionWire.changedCode)
      {
        try askAgain()
      } else if RemoteEngine.hasCode(response, status: 401, "E401001"), let signInAgain {
        forgetSession()
        let login = try signInAgain()
        guard login.principals.userId == caller?.userId else {
          throw DatastoreError(.authentication)
        }
      } else {
        let done = try checked(
          response, as: caller, method, path, query, body, contentType, signed,
          timeoutSeconds: timeoutSeconds)
        // Done by the server: the tag was the session's answer's. (Only a tagged request
        // says so: the feed's and the clock's, made for no caller, carry none.)
        unconfirmedTag = nil
        return done
      }
      return try send(
        as: caller, method, path, query: query, body: body, contentType: contentType,
        signed: signed, timeoutSeconds: timeoutSeconds)
    }
    return try checked(
      response, as: caller, method, path, query, body, contentType, signed,
      timeoutSeconds: timeoutSeconds)
  }

  /// `response` as `send` returns it: a refusal thrown, stale keys asked for once.
  private func checked(
    _ response: HTTPSClient.Response, as caller: Principals?, _ method: String, _ path: String,
    _ query: String, _ body: [UInt8], _ contentType: String?, _ signed: Bool,
    timeoutSeconds: Double? = nil
  ) throws -> HTTPSClient.Response {
    if signed, mayAskKeysAgain, RemoteEngine.isUnknownApplication(response) {
      // The keys are stale (rotated): once, the server's, and the request again.
      mayAskKeysAgain = false
      try fetchKeys()
      try keysChanged?(boardKeys)
      return try send(
        as: caller, method, path, query: query, body: body, contentType: contentType,
        signed: signed, timeoutSeconds: timeoutSeconds)
    }
    guard (200..<300).contains(response.status) else { throw refusal(response) }
    return response
  }

  /// NCMB's `E404005`: the application key signed with is not the board's.
  private static func isUnknownApplication(_ response: HTTPSClient.Response) -> Bool {
    hasCode(response, status: 404, "E404005")
  }

  /// True when `response` is a refusal with `status` and NCMB's error `code`.
  private static func hasCode(_ response: HTTPSClient.Response, status: Int, _ code: String)
    -> Bool
  {
    guard response.status == status, response.body.count <= 4096,
      let value = try? Wire.parse(response.body)
    else { return false }
    return value.objectValue?["code"]?.stringValue == code
  }

  private let apiVersion = "2013-09-01"

  /// The error an answer that is not a success says.
  private func refusal(_ response: HTTPSClient.Response) -> Error {
    guard response.body.count <= 64 << 10, let value = try? Wire.parse(response.body),
      let error = DatastoreError(wire: value)
    else {
      return http.failure("it answered HTTP \(response.status), not as a board does")
    }
    if case .int(let step)? = value.objectValue?["step"], step >= 0,
      step < Int64(WriteOperation.maximumSteps)
    {
      return WriteOperationError(step: Int(step), error: error)
    }
    return error
  }

  private func wireObject(_ value: JSONValue, _ what: String) throws -> WireObject {
    do {
      return try WireObject(value, what)
    } catch {
      throw http.failure("its answer is not the board's (\(what))")
    }
  }

  /// Reads an answer with `read`; a shape that is not the wire's is the server's failure.
  private func decode<T>(_ value: JSONValue, _ read: (JSONValue) throws -> T) throws -> T {
    do {
      return try read(value)
    } catch let error as DatastoreError {
      throw http.failure("its answer is not the board's (\(error.field ?? "?"))")
    }
  }

  private func objects(_ value: JSONValue) throws -> [DataObject] {
    try decode(value, DataObject.list(wire:))
  }

  private func notHere(_ what: String) -> DatastoreError {
    DatastoreError(
      .systemError, detail: "\(what) is done where the board is, not over https (\(authority))")
  }

  /// An owner's tool: one line saying where it runs (`Datastore.requireBoardsHost` says it
  /// first, before anything is opened).
  private func ownersTool(_ command: String) -> DatastoreError {
    DatastoreError(
      .systemError, reason: .access(.ownerToolOverHTTPS(command: command, server: authority)))
  }

  /// A query NCMB has no words for, where the board has no endpoint either.
  private func cannotAsk(_ what: String) -> DatastoreError {
    DatastoreError(.invalid, field: "where", detail: "\(what) cannot be asked over https")
  }

  // MARK: The board

  func now() throws -> Int64 {
    try wireObject(try call("GET", "forum/clock"), "clock").int("now")
  }

  func prepare(rules: EngineRules, indexes: [IndexSpec]) throws {
    // The server holds the rules and enforces them; these let the client check first.
    self.rules = rules
  }

  func install(rules: EngineRules, indexes: [IndexSpec]) throws { throw ownersTool("init") }
  func addIndex(_ spec: IndexSpec) throws { throw ownersTool("index") }

  // MARK: Identity

  func signIn(secret: String, previousSecret: String?, sessionLifetime: Double) throws -> Login {
    // NCMB's anonymous sign-up: the profile's secret for this board is the anonymous id.
    let answer = try call(
      "POST", "users",
      body: .object(["authData": .object(["anonymous": .object(["id": .string(secret)])])]))
    return try started(answer)
  }

  /// The session a sign-up or a login answered with, its principals and user.
  private func started(_ answer: JSONValue) throws -> Login {
    let object = try wireObject(answer, "login")
    let token = try object.string("sessionToken")
    guard !token.isEmpty, token.utf8.count <= 256, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
    else { throw http.failure("it sent a session that is not one") }
    sessionToken = token
    let (principals, user) = try session()
    if let userId = principals.userId { tokens[userId] = token }
    return Login(user: User(object: user), sessionToken: token, principals: principals)
  }

  /// The session's principals and user (`GET forum/session`).
  private func session(as caller: Principals? = nil) throws -> (Principals, DataObject) {
    let answer = try call(as: caller, "GET", "forum/session")
    let object = try wireObject(answer, "session")
    let (principals, user) = try decode(.object(object.fields)) { _ in
      (
        try Principals(wire: object["principals"] ?? .null),
        try DataObject(wire: object["user"] ?? .null)
      )
    }
    if caller == nil, case .bool(let owner)? = object["owner"] { ownsBoard = owner }
    justRead = principals.userId == nil ? nil : user
    if let userId = principals.userId { answers[userId] = (principals, user) }
    if caller == nil, let sessionToken {
      latestAnswer = KeptSessionAnswer(token: sessionToken, answer: answer)
    }
    return (principals, user)
  }

  /// Resumes the session `token` from the answer the profile kept for it, asking nothing; nil
  /// when none was kept for it or it is not an answer.
  private func resumed(_ token: String) -> Principals? {
    guard let kept = keptAnswer, kept.token == token, let tag = kept.tag,
      let object = try? WireObject(kept.answer, "session"),
      let principals = try? Principals(wire: object["principals"] ?? .null),
      let userId = principals.userId,
      let user = try? DataObject(wire: object["user"] ?? .null), user.objectId == userId,
      case .bool(let owner)? = object["owner"]
    else { return nil }
    keptAnswer = nil
    sessionToken = token
    tokens[userId] = token
    ownsBoard = owner
    justRead = user
    answers[userId] = (principals, user)
    latestAnswer = kept
    unconfirmedTag = tag
    return principals
  }

  /// The principals and user of `caller`'s session as its answer last said them, asked for
  /// first when it was resumed from a kept answer the server has not confirmed yet; nil when
  /// the caller was not made from an answer (sign-ups, tests).
  func confirmedSession(of caller: Principals) throws -> (principals: Principals, user: DataObject)?
  {
    guard let userId = caller.userId, answers[userId] != nil else { return nil }
    if unconfirmed(for: caller) != nil { try askAgain() }
    return answers[userId]
  }

  /// The user the last `forum/session` answer carried, given once to the `get` of that user
  /// which follows a sign-in (`currentUser`), so that it is not asked for twice in a row.
  private var justRead: DataObject?
  /// Whether the session's user owns the board, as the last `forum/session` said (a board's
  /// owner does not change while a command runs).
  private var ownsBoard: Bool?

  func caller(sessionToken token: String) throws -> Principals? {
    if let principals = resumed(token) { return principals }
    let previous = sessionToken
    sessionToken = token
    do {
      let principals = try session().0
      if let userId = principals.userId { tokens[userId] = token }
      return principals
    } catch let error as DatastoreError where error.code == .authentication {
      sessionToken = previous
      return nil
    }
  }

  func endSessions(userId: String) throws { throw notHere("ending sessions") }

  func signUp(userName: String, key: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login
  { throw notHere("a password sign-up with a hash") }

  /// NCMB's sign-up with a name and a password (`POST users`): the server hashes it.
  func signUp(userName: String, password: String) throws -> Login {
    try started(
      try call(
        "POST", "users",
        body: .object(["userName": .string(userName), "password": .string(password)])))
  }

  /// NCMB's login (`POST login` with a JSON body, as the Swift SDK sends it).
  func logIn(userName: String, password: String) throws -> Login {
    try started(
      try call(
        "POST", "login",
        body: .object(["userName": .string(userName), "password": .string(password)])))
  }

  func passwordCredential(key: String) throws -> PasswordCredential? { throw notHere("a password") }

  func startPasswordSession(userId: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login?
  { throw notHere("a password") }

  func setPassword(
    userId: String, passwordHash: String, keeping: [UInt8]?, as caller: Principals
  ) throws { throw notHere("a password") }

  func applicationKeys(create: Bool, rotate: Bool) throws -> ApplicationKeys? {
    throw ownersTool("keys")
  }

  func addMember(_ userId: String, toRole role: String) throws {
    try setRole(role, userId: userId, member: true, as: .anonymous)
  }

  // MARK: Writes

  func transaction<T>(_ body: () throws -> T) throws -> T {
    throw DatastoreError(
      .systemError, detail: "a transaction cannot cross the network; send a WriteOperation")
  }

  func perform(_ operation: WriteOperation, for client: DatastoreClient) throws -> WriteOutcome {
    try decode(
      try call(as: client.caller, "POST", "forum/perform", body: operation.wire),
      WriteOutcome.init(wire:))
  }

  /// NCMB's create (`POST classes/C`), the fields and the ACL as NCMB's body has them; the
  /// object is answered whole (`X-Forum-Wire: 1`), its rules' fields too.
  func insert(_ className: String, fields: [String: JSONValue], acl: ACL, as caller: Principals)
    throws -> DataObject
  {
    guard className != User.className else {
      throw DatastoreError(.noAccess, reason: StoreReason.usersAreMadeBySigningIn)
    }
    var body = fields
    body["acl"] = acl.json
    let answer = try call(as: caller, "POST", try writePath(className), body: .object(body))
    return try decode(answer, DataObject.init(wire:))
  }

  /// NCMB's update (`PUT classes/C/ID`, a user's `PUT users/ID`): counters and arrays changed
  /// by NCMB's operators (`NCMBUpdate`), answered whole.
  func update(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], arrays: [String: ArrayChange], acl: ACL?,
    as caller: Principals
  ) throws -> DataObject {
    let body = try NCMBUpdate.body(set: fields, increment: increments, arrays: arrays, acl: acl)
    let path = try writePath(className) + "/" + RemoteEngine.percentEncoded(objectId)
    let updated = try decode(try call(as: caller, "PUT", path, body: body), DataObject.init(wire:))
    if className == User.className { ownUserChanged(updated, as: caller) }
    return updated
  }

  /// Your own user, changed by this command as the server answered it: the answer kept for the
  /// next command is the server's principals and owner beside it, so that the next does not
  /// find it changed (the server compares its tag all the same).
  private func ownUserChanged(_ user: DataObject, as caller: Principals) {
    guard let userId = caller.userId, user.objectId == userId, let known = answers[userId],
      let latestAnswer, unconfirmedTag == nil, let ownsBoard, let sessionToken,
      latestAnswer.token == sessionToken, tokens[userId] == sessionToken,
      let kept = KeptSessionAnswer(
        token: sessionToken,
        answer: SessionWire.answer(principals: known.principals, user: user, owner: ownsBoard))
    else { return }
    answers[userId] = (known.principals, user)
    self.latestAnswer = kept
    try? answerChanged?(kept)
  }

  /// NCMB's delete (`DELETE classes/C/ID`, a user's `DELETE users/ID`), with the rules'
  /// cascades.
  func delete(_ className: String, objectId: String, as caller: Principals) throws {
    try call(
      as: caller, "DELETE", try writePath(className) + "/" + RemoteEngine.percentEncoded(objectId))
  }

  /// NCMB's path of the objects of `className`; NCMB's other classes (roles, files…) are
  /// written through their own calls only.
  private func writePath(_ className: String) throws -> String {
    guard let path = RemoteEngine.classPath(className) else {
      throw DatastoreError(
        .invalid, field: "className", detail: "\(className) objects are not written over https")
    }
    return path
  }

  // MARK: Reads

  func get(_ className: String, objectId: String, as caller: Principals) throws -> DataObject {
    if className == User.className, let user = justRead, user.objectId == objectId,
      caller.userId == objectId
    {
      justRead = nil
      return user
    }
    if let path = RemoteEngine.classPath(className) {
      let answer = try call(
        as: caller, "GET", path + "/" + RemoteEngine.percentEncoded(objectId))
      return try decode(answer, DataObject.init(wire:))
    }
    let answer = try call(
      as: caller, "POST", "forum/get",
      body: .object(["className": .string(className), "objectId": .string(objectId)]))
    return try decode(answer, DataObject.init(wire:))
  }

  var resolvesIncludes: Bool { true }

  func find(_ query: Query, as caller: Principals) throws -> [DataObject] {
    guard let path = RemoteEngine.classPath(query.className),
      let parameters = query.ncmbParameters()
    else { return try objects(try call(as: caller, "POST", "forum/find", body: query.wire)) }
    return try objects(
      try call(as: caller, "GET", path, query: RemoteEngine.queryString(parameters)))
  }

  func find(
    _ query: Query, as caller: Principals, writing shape: ObjectShape, to out: inout [UInt8]
  ) throws -> [String] {
    shape.write(try find(query, as: caller), to: &out)
  }

  func get(
    _ className: String, objectId: String, as caller: Principals, writing shape: ObjectShape,
    to out: inout [UInt8]
  ) throws {
    shape.write(try get(className, objectId: objectId, as: caller), to: &out)
  }

  /// NCMB's find with `count=1`: the page and the count in one answer.
  func findCounted(_ query: Query, as caller: Principals) throws -> (
    objects: [DataObject], count: Int?
  ) {
    guard let path = RemoteEngine.classPath(query.className),
      let parameters = query.ncmbParameters()
    else { return try findThenCount(query, as: caller) }
    let answer = try call(
      as: caller, "GET", path, query: RemoteEngine.queryString(parameters + [("count", "1")]))
    return (try objects(answer), try wireObject(answer, "count").count("count"))
  }

  /// NCMB's find with the board's `unreadUpTo=N` (and `count=1` when counted): the page, its
  /// count and the caller's read states in one answer.
  func findWithUnread(_ query: Query, counted: Bool, countUpTo limit: Int, as caller: Principals)
    throws -> FoundWithUnread?
  {
    guard let path = RemoteEngine.classPath(query.className),
      let parameters = query.ncmbParameters()
    else { return nil }
    let answer = try call(
      as: caller, "GET", path,
      query: RemoteEngine.queryString(
        parameters + (counted ? [("count", "1")] : []) + [("unreadUpTo", String(limit))]))
    let found = try objects(answer)
    let count = counted ? try wireObject(answer, "count").count("count") : nil
    // A server from before `unreadUpTo` leaves it out: the states are asked as before.
    guard case .object(let fields) = answer, fields["unread"] != nil else {
      return FoundWithUnread(
        objects: found, count: count,
        unread: try unread(
          query.className, objectIds: found.map(\.objectId), countUpTo: limit, as: caller))
    }
    return FoundWithUnread(
      objects: found, count: count,
      unread: try decode(answer) { value in
        try WireObject(value, "unread").object("unread").mapValues(UnreadState.init(wire:))
      })
  }

  func count(_ query: Query, as caller: Principals) throws -> Int {
    guard let path = RemoteEngine.classPath(query.className),
      let parameters = query.ncmbParameters(count: true)
    else {
      return try wireObject(
        try call(as: caller, "POST", "forum/count", body: query.wire), "count"
      ).count("count")
    }
    let answer = try call(as: caller, "GET", path, query: RemoteEngine.queryString(parameters))
    return try wireObject(answer, "count").count("count")
  }

  /// NCMB's path of a class: `classes/C`, users' `users`; nil for NCMB's other classes (roles,
  /// files…), which the board's endpoints read.
  static func classPath(_ className: String) -> String? {
    if className == User.className { return "users" }
    guard Validation.isName(className),
      !["role", "file", "installation", "push"].contains(className)
    else { return nil }
    return "classes/" + className
  }

  /// `name=value&…` with each value percent-encoded, as sent and as signed.
  static func queryString(_ parameters: [(String, String)]) -> String {
    parameters.map { $0.0 + "=" + percentEncoded($0.1) }.joined(separator: "&")
  }

  func search(_ search: TextSearch, as caller: Principals) throws -> [DataObject] {
    try objects(try call(as: caller, "POST", "forum/search", body: search.wire))
  }

  func fetch(objectIds: [String], keys: Set<String>?, budget: Int?, as caller: Principals) throws
    -> [DataObject]
  {
    var body: [String: JSONValue] = ["objectIds": .strings(objectIds)]
    if let keys { body["keys"] = .strings(keys.sorted()) }
    if let budget { body["budget"] = .int(Int64(budget)) }
    return try objects(try call(as: caller, "POST", "forum/fetch", body: .object(body)))
  }

  // MARK: Files

  /// NCMB's upload (`POST files/NAME`), multipart as the SDKs send it: an `acl` part and a
  /// `file` part.
  func insertFile(
    name: String, bytes: [UInt8], mimeType: String, acl: ACL, as caller: Principals
  ) throws -> FileInfo {
    let boundary = "_ForumBoundary" + Validation.randomId(length: 24)
    guard mimeType.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw DatastoreError.invalid("mimeType")
    }
    var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"acl\"\r\n\r\n".utf8)
    body += acl.json.jsonBytes()
    body += Array(
      ("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n"
        + "Content-Type: \(mimeType)\r\n\r\n").utf8)
    body += bytes
    body += Array("\r\n--\(boundary)--\r\n".utf8)
    let answer = try parsed(
      try send(
        as: caller, "POST", "files/" + RemoteEngine.percentEncoded(name), body: body,
        contentType: "multipart/form-data; boundary=" + boundary))
    return try decode(answer, FileInfo.init(wire:))
  }

  /// NCMB's file search for the one name.
  func fileInfo(name: String, as caller: Principals) throws -> FileInfo {
    let query = Query(
      className: "file", equalTo: ["fileName": .string(name)], order: ["fileName"], limit: 1)
    guard let info = try findFiles(query, as: caller).first else {
      throw DatastoreError.notFound
    }
    return info
  }

  func fileBytes(name: String, as caller: Principals) throws -> [UInt8] {
    // NCMB's own download: the bytes as stored.
    try send(as: caller, "GET", "files/" + RemoteEngine.percentEncoded(name)).body
  }

  /// NCMB's file search (`GET files?where=…`).
  func findFiles(_ query: Query, as caller: Principals) throws -> [FileInfo] {
    guard let parameters = query.ncmbParameters() else { throw cannotAsk("this file search") }
    let answer = try call(as: caller, "GET", "files", query: RemoteEngine.queryString(parameters))
    return try decode(answer) {
      try WireObject($0, "files").array("results").map(FileInfo.init(wire:))
    }
  }

  func countFiles(_ query: Query, as caller: Principals) throws -> Int {
    guard let parameters = query.ncmbParameters(count: true) else {
      throw cannotAsk("this file search")
    }
    let answer = try call(as: caller, "GET", "files", query: RemoteEngine.queryString(parameters))
    return try wireObject(answer, "count").count("count")
  }

  func deleteFile(name: String, as caller: Principals) throws {
    _ = try send(as: caller, "DELETE", "files/" + RemoteEngine.percentEncoded(name))
  }

  func updateFile(name: String, acl: ACL, as caller: Principals) throws -> FileInfo {
    throw notHere("a file's ACL")
  }

  static func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
        UInt8(ascii: "."), UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let digits = Array("0123456789ABCDEF")
        out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
      }
    }
    return out
  }

  // MARK: Change feed

  func latestChange() throws -> Int64 {
    try wireObject(try call("GET", "forum/clock"), "clock").int("latestChange")
  }

  func changes(since: Int64, limit: Int, as caller: Principals) throws -> ChangeBatch {
    try changes(since: since, limit: limit, waitSeconds: 0, as: caller)
  }

  /// `GET forum/changes` (`ChangeWire`); with `waitSeconds`, a long-poll the server holds
  /// until something the member may read is committed.
  private func changes(
    since: Int64, limit: Int, waitSeconds: Int, as caller: Principals? = nil
  ) throws -> ChangeBatch {
    var query = "limit=\(limit)&since=\(since)"
    if waitSeconds > 0 { query += "&wait=\(waitSeconds)" }
    let response = try send(
      as: caller, "GET", "forum/changes", query: query,
      timeoutSeconds: waitSeconds > 0 ? Double(waitSeconds + 15) : nil)
    do {
      return try ChangeWire.batch(response.body, since: since, limit: limit)
    } catch let error as ChangeWire.Malformed {
      throw http.failure(Wire.printable(error.description, limit: 200))
    }
  }

  private var wakeup: RemoteWakeup?

  func wakeFileDescriptor() throws -> Int32? {
    if let wakeup { return wakeup.descriptor }
    let start = try latestChange()
    let made = try RemoteWakeup(since: start) { [weak self] since in
      guard let self else { throw RemoteWakeup.Closed() }
      return try self.changes(since: since, limit: 1, waitSeconds: RemoteWakeup.waitSeconds)
    }
    wakeup = made
    return made.descriptor
  }

  /// The descriptor wakes the prompt; this is only a fallback.
  var wakePollInterval: Double { 1.0 }

  func hasPendingWakeup() throws -> Bool {
    guard let wakeup else {
      _ = try wakeFileDescriptor()
      return true
    }
    return try wakeup.pending()
  }

  func stateMark() throws -> StateMark? { nil }

  // MARK: The owner's tools

  func importItems(
    next: () throws -> ImportItem?, outcome: (ImportOutcome) throws -> Void
  ) throws { throw ownersTool("import") }

  func storedObjects(_ objectIds: [String]) throws -> [String: ImportedObject] {
    throw ownersTool("import")
  }

  func counter(_ name: String) throws -> Int64 { throw ownersTool("import") }
}

// MARK: Reading

extension RemoteEngine: ReadingEngine {
  func markRead(_ parentClass: String, objectId: String, upTo number: Int64, as caller: Principals)
    throws
  {
    try read(
      as: caller,
      [
        "call": .string("markRead"), "className": .string(parentClass),
        "objectId": .string(objectId),
        "upTo": .int(number),
      ])
  }

  func advanceRead(
    _ parentClass: String, objectId: String, to number: Int64, as caller: Principals
  ) throws {
    try read(
      as: caller,
      [
        "call": .string("advanceRead"), "className": .string(parentClass),
        "objectId": .string(objectId), "to": .int(number),
      ])
  }

  func markAllRead(_ parentClass: String, as caller: Principals) throws {
    try read(as: caller, ["call": .string("markAllRead"), "className": .string(parentClass)])
  }

  func unread(
    _ parentClass: String, objectIds: [String], countUpTo limit: Int, as caller: Principals
  ) throws -> [String: UnreadState] {
    let answer = try call(
      as: caller, "POST", "forum/unread",
      body: .object([
        "className": .string(parentClass), "objectIds": .strings(objectIds),
        "countUpTo": .int(Int64(limit)),
      ]))
    return try decode(answer) { value in
      try WireObject(value, "unread").object("states").mapValues(UnreadState.init(wire:))
    }
  }

  @discardableResult
  private func read(as caller: Principals, _ body: [String: JSONValue]) throws -> JSONValue {
    try call(as: caller, "POST", "forum/read", body: .object(body))
  }

  func revisions(
    _ className: String, objectId: String, skip: Int, limit: Int, as caller: Principals
  ) throws -> RevisionPage {
    let answer = try call(
      as: caller, "POST", "forum/revisions",
      body: .object([
        "className": .string(className), "objectId": .string(objectId), "skip": .int(Int64(skip)),
        "limit": .int(Int64(limit)),
      ]))
    return try decode(answer, RevisionPage.init(wire:))
  }

  func moderate(_ className: String, objectId: String, as caller: Principals) throws {
    try call(
      as: caller, "POST", "forum/moderate",
      body: .object(["className": .string(className), "objectId": .string(objectId)]))
  }

  func setFlag(_ rule: FlagRule, objectId: String, on: Bool, as caller: Principals) throws {
    try call(
      as: caller, "POST", "forum/flag",
      body: .object([
        "className": .string(rule.className), "objectId": .string(objectId),
        "field": .string(rule.field), "on": .bool(on),
      ]))
  }

  func currentPrincipals(of caller: Principals) throws -> Principals {
    // The session's answer kept with its tag: the next request carries the tag instead of the
    // answer being asked for now (the server refuses it when the answer changed, and a
    // decision made before it asks first: `confirmedSession`).
    if let userId = caller.userId, let known = answers[userId], let latestAnswer,
      let sessionToken, latestAnswer.token == sessionToken, tokens[userId] == sessionToken,
      let tag = latestAnswer.tag, signInAgain != nil
    {
      unconfirmedTag = tag
      return known.principals
    }
    return try session().0
  }

  func isBoardOwner(_ caller: Principals) throws -> Bool {
    if unconfirmed(for: caller) != nil { try askAgain() }
    if let ownsBoard { return ownsBoard }
    let owner = try wireObject(try call("GET", "forum/session"), "session").bool("owner")
    ownsBoard = owner
    return owner
  }

  func setRole(_ role: String, userId: String, member: Bool, as caller: Principals) throws {
    try call(
      as: caller, "POST", "forum/role",
      body: .object([
        "role": .string(role), "userId": .string(userId), "member": .bool(member),
      ]))
  }

  func members(ofRole role: String, as caller: Principals) throws -> [String] {
    let answer = try call(
      as: caller, "POST", "forum/members", body: .object(["role": .string(role)]))
    return try decode(answer) { try WireObject($0, "members").strings("members") }
  }

  func setting(_ name: String, as caller: Principals) throws -> String? {
    let answer = try call(
      as: caller, "POST", "forum/setting", body: .object(["name": .string(name)]))
    return try decode(answer) { try WireObject($0, "setting").optionalString("value") }
  }

  func setSetting(_ name: String, value: String?, as caller: Principals) throws {
    try call(
      as: caller, "POST", "forum/setSetting",
      body: .object(["name": .string(name), "value": value.map(JSONValue.string) ?? .null]))
  }
}
