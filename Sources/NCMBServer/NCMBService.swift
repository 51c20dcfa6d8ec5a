import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The board a service opened first (set once, by the first open, before any request).
private final class BoardIdentity: @unchecked Sendable {
  var id: String?
}

/// NCMB's REST API (2013-09-01) over a `Datastore`: signature, sessions, classes, users, login,
/// roles, files. Knows no threads: the board's rules are the engine's, and what the application
/// adds comes in as an `NCMBPolicy`. Holds no state of its own: keys and sessions are read from
/// the database on every request.
public final class NCMBService: HTTPHandler, @unchecked Sendable {
  /// The prefix every NCMB path starts with.
  public static let apiVersion = "2013-09-01"
  /// Largest JSON body taken (`E413002` above it).
  public static let maximumJSONBytes = 1 << 20

  private let pool: StorePool
  private let policy: NCMBPolicy
  private let clock: @Sendable () -> Int64
  private let recheck: Int64
  /// The time limit of each request and the rate limits (`RateLimits.swift`).
  public let limits: ServeLimits
  private let rateLimits: RateLimits

  /// How late a write by another process on the same SQLite file (the prompt, `sqlite3`) may
  /// be seen: answers, sessions and keys are looked up again once the database's state was
  /// last looked at this long ago (`ReadCache`). This server's own writes are seen by the next
  /// request on every connection, at once.
  public static let recheckMilliseconds: Int64 = 10

  /// A service for the board at `location`. Makes the board's keys if it has none (see
  /// `Datastore.applicationKeys`): the caller is the board's owner. `clock` is milliseconds since
  /// 1970 (tests move it).
  public init(
    location: String, policy: NCMBPolicy = .none,
    clock: @escaping @Sendable () -> Int64 = { BackendDate.now() },
    recheckMilliseconds: Int64 = NCMBService.recheckMilliseconds, limits: ServeLimits = .none
  ) throws {
    recheck = recheckMilliseconds
    self.limits = limits
    rateLimits = RateLimits(limits)
    // A connection is opened again after a system error (a lost file or server): never onto a
    // new empty board made where a removed file was, nor onto another board put in its place.
    let board = BoardIdentity()
    pool = StorePool {
      if EngineKind(location: location) == .sqlite, board.id != nil,
        access(location, F_OK) != 0
      {
        throw DatastoreError(
          .systemError, detail: "the database file \(location) is gone; nothing was written")
      }
      let store: Datastore
      do {
        store = try Datastore.open(location)
      } catch let error as DatastoreError where board.id != nil && error.code != .systemError {
        // Opening again after a loss (a dropped database refuses the login): the server's
        // failure, not the app's session, which E401001 would have it sign in again for.
        throw DatastoreError(.systemError, detail: "the board cannot be opened again: \(error)")
      }
      guard board.id == nil || board.id == store.boardId else {
        throw DatastoreError(
          .systemError, detail: "\(location) is now another board; nothing was written")
      }
      if board.id == nil { board.id = store.boardId }
      return store
    }
    self.policy = policy
    self.clock = clock
    let queues = try pool.with {
      _ = try $0.store.applicationKeys()
      return $0.store.commitsInGroups
    }
    writers = nil
    if queues {
      writers = WriteQueue { [unowned self] jobs in self.write(jobs) }
    }
  }

  /// Requests that may write wait here and are written in batches, one commit for all the
  /// requests waiting (`WriteQueue`), where each would otherwise wait for the database lock
  /// (SQLite's busy handler naps 10 ms) or for the rows another holds to its commit (PostgreSQL:
  /// a thread's counters), and pay a commit of its own. Nothing of it outlives a batch: other
  /// servers on the same PostgreSQL database write beside it.
  private(set) var writers: WriteQueue?

  /// The board's keys as they are now.
  public func keys() throws -> ApplicationKeys {
    try pool.with { try $0.store.applicationKeys() }
  }

  /// Stops every request's statements now and those of requests still to come (a second
  /// SIGTERM): each is answered E500001, its write undone.
  public func stopRunning() { pool.stopAll() }

  public func respond(to request: HTTPRequest) -> HTTPResponse {
    if let refusal = rateLimits.refusal(request, prefix: NCMBService.prefix) {
      return failure(refusal)
    }
    if let writers, request.method != "GET" { return writers.submit(request) }
    let (slot, busy) = rateLimits.enter(request)
    if let busy { return failure(busy) }
    defer { rateLimits.leave(slot) }
    do {
      return try pool.with { pooled in
        pooled.budget.begin(seconds: limits.timeLimitSeconds, clientGone: request.clientGone)
        defer { pooled.budget.end() }
        // A read that wrote (`GET /logout`) is seen by every connection's next request.
        let before = pooled.store.ownChanges
        defer { if pooled.store.ownChanges != before { pool.noteWrite() } }
        return try answer(request, pooled)
      }
    } catch {
      return failure(error)
    }
  }

  /// A batch of requests that may write: each in its own savepoint of one transaction, so a
  /// refused one undoes itself alone and gets its own error; all answered after the commit.
  private func write(_ jobs: [WriteQueue.Job]) {
    do {
      try pool.with { pooled in
        var answers = [HTTPResponse?](repeating: nil, count: jobs.count)
        let before = pooled.store.ownChanges
        let errors = try pooled.store.group(jobs.count) { index in
          let request = jobs[index].request
          pooled.budget.begin(seconds: limits.timeLimitSeconds, clientGone: request.clientGone)
          defer { pooled.budget.end() }
          answers[index] = try answer(request, pooled)
        }
        if pooled.store.ownChanges != before { pool.noteWrite() }
        for (index, job) in jobs.enumerated() {
          job.response = errors[index].map(failure) ?? answers[index]
        }
      }
    } catch {
      // Nothing of the batch was committed.
      let response = failure(error)
      for job in jobs { job.response = response }
    }
  }

  private func failure(_ error: any Error) -> HTTPResponse {
    let error: NCMBError =
      switch error {
      case let error as NCMBError: error
      case let error as DatastoreError: NCMBError(error)
      default: .system
      }
    return HTTPResponse(status: error.status, headers: NCMBService.jsonHeaders, body: error.body)
  }

  static let jsonHeaders = [(name: "content-type", value: "application/json; charset=utf-8")]

  private static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
    HTTPResponse(status: status, headers: jsonHeaders, body: value.jsonBytes())
  }

  // MARK: Routing

  private static let prefix = "/\(NCMBService.apiVersion)/"

  private func answer(_ request: HTTPRequest, _ pooled: StorePool.Pooled) throws -> HTTPResponse {
    let (store, cache) = (pooled.store, pooled.cache)
    let prefix = NCMBService.prefix
    guard request.path.hasPrefix(prefix) else {
      if request.path.hasPrefix("/2015-09-01/script") { throw NCMBError.unsupported("scripts") }
      throw NCMBError.notFound
    }
    let now = clock()
    // The file is looked at every time (a removed board is E500001 at once), its state only
    // when it may have changed.
    try store.checkInPlace()
    let mark = try cache.revalidate(generation: pooled.generation, now: now, recheck: recheck) {
      try store.stateMark()
    }
    guard
      let keys = try cache.keys(
        now: now, recheck: recheck,
        { try store.existingApplicationKeys().map(NCMBSignature.Keys.init) })
    else {
      throw NCMBError.header
    }
    try NCMBSignature.verify(request, keys: keys, now: now)
    guard request.body.count <= NCMBService.maximumJSONBytes || !request.formParts.isEmpty
    else { throw NCMBError.tooLarge }

    var segments = request.path.dropFirst(prefix.count).split(
      separator: "/", omittingEmptySubsequences: false
    ).map(String.init)
    if segments.last == "" { segments.removeLast() }  // the Python SDK's trailing slash
    guard !segments.isEmpty, !segments.contains("") else { throw NCMBError.notFound }
    let names = try segments.map { try NCMBQuery.decode($0, field: "path", plusIsSpace: false) }
    let client = try store.client(
      sessionToken: request.header("X-NCMB-Apps-Session-Token"), known: mark)
    let method = request.method
    // Reads that write nothing and depend only on the database and the caller.
    guard method == "GET", ["classes", "users", "roles", "files"].contains(names[0]) else {
      return try route(request, names, store, client)
    }
    let key = ReadCache.key(request, client.principals)
    if let kept = cache.answer(for: key) { return kept }
    let response = try route(request, names, store, client)
    cache.keep(response, for: key)
    return response
  }

  private func route(
    _ request: HTTPRequest, _ names: [String], _ store: Datastore, _ client: DatastoreClient
  ) throws -> HTTPResponse {
    let method = request.method

    switch (names[0], names.count) {
    case ("classes", 2), ("classes", 3):
      let className = names[1]
      guard !NCMBService.systemClasses.contains(className) else { throw NCMBError.notFound }
      return try objects(request, className, names.count == 3 ? names[2] : nil, client)
    case ("users", 1), ("users", 2):
      return try users(request, names.count == 2 ? names[1] : nil, store, client)
    case ("login", 1):
      guard method == "GET" || method == "POST" else { throw NCMBError.method }
      // The board has no password accounts: every user is anonymous.
      throw NCMBError.idPass
    case ("logout", 1):
      guard method == "GET" || method == "POST" else { throw NCMBError.method }
      guard let userId = client.userId else { throw NCMBError.header }
      try store.endSessions(userId: userId)
      return NCMBService.json(.object([:]))
    case ("roles", 1):
      guard method == "GET" else { throw NCMBError.method }
      let roles = client.principals.names.filter { $0.hasPrefix("role:") }.sorted()
      return NCMBService.json(
        .object([
          "results": .array(roles.map { .object(["roleName": .string(String($0.dropFirst(5)))]) })
        ]))
    case ("roles", 2): throw NCMBError.notFound
    case ("files", 1):
      guard method == "GET" else { throw NCMBError.method }
      return try fileSearch(request, client)
    case ("files", 2):
      return try files(request, names[1], store, client)
    default:
      if let feature = NCMBService.unsupported[names[0]] { throw NCMBError.unsupported(feature) }
      throw NCMBError.notFound
    }
  }

  /// NCMB's paths the board does not serve, by the feature each was.
  static let unsupported = [
    "push": "push", "installations": "installations", "requestPasswordReset": "password reset",
    "requestMailAddressUserEntry": "mail sign-up", "batch": "batch",
  ]

  /// NCMB's own classes, reached through their own paths only.
  static let systemClasses: Set<String> = ["user", "role", "file", "installation", "push"]

  // MARK: Objects

  private func objects(
    _ request: HTTPRequest, _ className: String, _ objectId: String?, _ client: DatastoreClient
  ) throws -> HTTPResponse {
    switch (request.method, objectId) {
    case ("GET", nil):
      return try search(request, className, client)
    case ("POST", nil):
      return try create(request, className, client)
    case ("GET", let id?):
      let parameters = try NCMBQuery.parameters(request.rawQuery)
      let include = parameters["include"].map { $0.split(separator: ",").map(String.init) } ?? []
      guard include.isEmpty else {
        guard let object = try client.get(className, objectIds: [id], include: include).first
        else { throw NCMBError.notFound }
        return NCMBService.json(NCMBJSON.object(object))
      }
      return NCMBService.json(NCMBJSON.object(try client.get(className, objectId: id)))
    case ("PUT", let id?):
      return try update(request, className, id, client)
    case ("DELETE", let id?):
      try client.delete(className, objectId: id)
      return HTTPResponse(status: 200, headers: NCMBService.jsonHeaders)
    default:
      throw NCMBError.method
    }
  }

  private func search(_ request: HTTPRequest, _ className: String, _ client: DatastoreClient)
    throws -> HTTPResponse
  {
    let (query, withCount) = try NCMBQuery.query(
      className: className, try NCMBQuery.parameters(request.rawQuery))
    var body: [String: JSONValue] = [
      "results": .array(try client.find(query).map(NCMBJSON.object))
    ]
    if withCount { body["count"] = .int(Int64(try client.count(query))) }
    return NCMBService.json(.object(body))
  }

  /// Fields an app sends that are the datastore's: dropped as NCMB did (the Python SDK sends
  /// `createDate` back on every update).
  private static let systemFields: Set<String> = ["objectId", "createDate", "updateDate"]

  private func create(_ request: HTTPRequest, _ className: String, _ client: DatastoreClient)
    throws -> HTTPResponse
  {
    var fields = try NCMBJSON.object(request.body)
    let acl = try fields.removeValue(forKey: "acl").map(ACL.init(json:))
    for field in NCMBService.systemFields { fields[field] = nil }
    fields = try fields.mapValues(NCMBService.stored)
    fields = try policy.object(className, fields, true, client)
    // A class whose objects have an author: unless the app says otherwise, everyone reads and
    // the author alone writes (the backend's public read and write would be refused).
    var given = acl
    if given == nil, client.store.rules.owner(of: className) != nil, let userId = client.userId {
      given = .publicRead(owner: userId)
    }
    let object = try client.create(className, fields: fields, acl: given)
    return NCMBService.json(
      .object([
        "objectId": .string(object.objectId), "createDate": NCMBJSON.date(object.createDate),
      ]), status: 201)
  }

  private func update(
    _ request: HTTPRequest, _ className: String, _ objectId: String, _ client: DatastoreClient
  ) throws -> HTTPResponse {
    var fields = try NCMBJSON.object(request.body)
    let acl = try fields.removeValue(forKey: "acl").map(ACL.init(json:))
    for field in NCMBService.systemFields { fields[field] = nil }
    var set: [String: JSONValue] = [:]
    var increments: [String: Int64] = [:]
    for (key, value) in fields {
      if case .object(let operation) = value, let name = operation["__op"]?.stringValue {
        switch name {
        case "Increment":
          guard let amount = operation["amount"]?.intValue else {
            throw NCMBError.invalid(key, "Increment needs a whole amount")
          }
          increments[key] = amount
        case "Delete": set[key] = .null
        default: throw NCMBError.invalid(key, "\(name) is not supported")
        }
      } else {
        set[key] = try NCMBService.stored(value)
      }
    }
    set = try policy.object(className, set, false, client)
    let object = try client.update(
      className, objectId: objectId, set: set, increment: increments, acl: acl)
    return NCMBService.json(.object(["updateDate": NCMBJSON.date(object.updateDate)]))
  }

  /// A value as stored: pointers reduced to the three keys the backend compares.
  static func stored(_ value: JSONValue) throws -> JSONValue {
    guard case .object(let object) = value, object["__type"] == .string("Pointer") else {
      return value
    }
    guard let className = object["className"]?.stringValue,
      let objectId = object["objectId"]?.stringValue
    else { throw NCMBError.invalid("pointer") }
    return .pointer(className: className, objectId: objectId)
  }

  // MARK: Users

  private func users(
    _ request: HTTPRequest, _ objectId: String?, _ store: Datastore, _ client: DatastoreClient
  ) throws -> HTTPResponse {
    switch (request.method, objectId) {
    case ("POST", nil):
      let fields = try NCMBJSON.object(request.body)
      guard
        let id = fields["authData"]?.objectValue?["anonymous"]?.objectValue?["id"]?.stringValue
      else {
        // Every user of the board is anonymous (no passwords, no mail).
        throw NCMBError.invalid("authData", "only anonymous sign-up is supported")
      }
      let login: Login
      do {
        login = try store.loginAnonymously(secret: id)
      } catch let error as DatastoreError where error.code == .invalid {
        throw NCMBError.invalid("authData")
      }
      return NCMBService.json(
        .object([
          "objectId": .string(login.user.objectId),
          "createDate": NCMBJSON.date(login.user.object.createDate),
          "userName": .string(login.user.userName), "sessionToken": .string(login.sessionToken),
          "authData": .object(["anonymous": .object(["id": .string(id)])]),
        ]), status: 201)
    case ("GET", nil):
      return try search(request, User.className, client)
    case ("GET", let id?):
      return NCMBService.json(NCMBJSON.object(try client.get(User.className, objectId: id)))
    case ("PUT", let id?):
      guard let me = client.userId else { throw NCMBError.header }
      guard id == me else { throw NCMBError.noAccess }
      var fields = try NCMBJSON.object(request.body)
      for field in NCMBService.systemFields { fields[field] = nil }
      for field in ["authData", "password", "mailAddress", "sessionToken", "userName", "acl"]
      where fields[field] != nil {
        throw NCMBError.invalid(field, "cannot be changed here")
      }
      fields = try policy.object(User.className, fields, false, client)
      var updated = try client.currentUser().object
      if let name = fields.removeValue(forKey: "displayName") {
        guard let text = name.stringValue else { throw NCMBError.invalid("displayName") }
        updated = try client.setDisplayName(text).object
      }
      if !fields.isEmpty {
        updated = try client.update(
          User.className, objectId: me, set: try fields.mapValues(NCMBService.stored))
      }
      return NCMBService.json(.object(["updateDate": NCMBJSON.date(updated.updateDate)]))
    case ("DELETE", let id?):
      guard let me = client.userId else { throw NCMBError.header }
      guard id == me else { throw NCMBError.noAccess }
      try client.delete(User.className, objectId: me)
      try store.endSessions(userId: me)
      return HTTPResponse(status: 200, headers: NCMBService.jsonHeaders)
    default:
      throw NCMBError.method
    }
  }

  // MARK: Files

  /// NCMB's file search (`GET /files`): the metadata of the files the caller may read, with the
  /// parameters and errors of an object query (`where` over `fileName`, `mimeType`,
  /// `fileSize`, `createDate`, `updateDate`).
  private func fileSearch(_ request: HTTPRequest, _ client: DatastoreClient) throws
    -> HTTPResponse
  {
    let (query, withCount) = try NCMBQuery.query(
      className: "file", try NCMBQuery.parameters(request.rawQuery))
    var body: [String: JSONValue] = [
      "results": .array(try client.findFiles(query).map(\.json))
    ]
    if withCount { body["count"] = .int(Int64(try client.countFiles(query))) }
    return NCMBService.json(.object(body))
  }

  private func files(
    _ request: HTTPRequest, _ name: String, _ store: Datastore, _ client: DatastoreClient
  ) throws -> HTTPResponse {
    switch request.method {
    case "POST":
      var bytes = request.body
      var mimeType = request.header("Content-Type") ?? "application/octet-stream"
      var acl: ACL?
      if !request.formParts.isEmpty {
        guard let file = request.formParts.first(where: { $0.name == "file" }) else {
          throw NCMBError.empty("file")
        }
        bytes = file.bytes
        mimeType = file.contentType ?? "application/octet-stream"
        if let part = request.formParts.first(where: { $0.name == "acl" }), !part.bytes.isEmpty {
          acl = try ACL(json: NCMBJSON.parse(part.bytes))
        }
      } else if mimeType.lowercased().hasPrefix("multipart/") {
        throw NCMBError.empty("file")
      }
      // None sent: everyone reads, the uploader alone writes, as for an object with an author
      // (with NCMB's public write anyone could take a thread's picture over or delete it).
      if acl == nil, let userId = client.userId { acl = .publicRead(owner: userId) }
      guard bytes.count <= store.fileSizeLimit else { throw NCMBError.fileTooLarge }
      guard !bytes.isEmpty else { throw NCMBError.empty("file") }
      try checkFileName(name)
      do {
        (bytes, mimeType) = try policy.file(name, bytes, mimeType)
      } catch let error as DatastoreError {
        throw NCMBError(error)
      } catch let error as NCMBError {
        throw error
      } catch {
        throw NCMBError.mediaType(String(describing: error))
      }
      let info = try client.putFile(name: name, bytes: bytes, mimeType: mimeType, acl: acl)
      return NCMBService.json(
        .object(["fileName": .string(info.fileName), "createDate": NCMBJSON.date(info.createDate)]),
        status: 201)
    case "GET":
      try checkFileName(name)
      let info = try client.fileInfo(name: name)
      let bytes = try client.getFile(name: name)
      return HTTPResponse(
        status: 200, headers: [(name: "content-type", value: info.mimeType)], body: bytes)
    case "PUT":
      // NCMB's file update: the ACL only (the bytes of a stored file never change).
      try checkFileName(name)
      var fields = try NCMBJSON.object(request.body)
      guard let given = fields.removeValue(forKey: "acl") else { throw NCMBError.empty("acl") }
      if let other = fields.keys.sorted().first {
        throw NCMBError.invalid(other, "only a file's acl can be changed")
      }
      let info = try client.setFileACL(name: name, acl: try ACL(json: given))
      return NCMBService.json(.object(["updateDate": NCMBJSON.date(info.updateDate)]))
    case "DELETE":
      try checkFileName(name)
      try client.deleteFile(name: name)
      return HTTPResponse(status: 200, headers: NCMBService.jsonHeaders)
    default:
      throw NCMBError.method
    }
  }

  /// `/`, `..`, a NUL and anything outside `[A-Za-z0-9._-]` are refused before the datastore.
  private func checkFileName(_ name: String) throws {
    let allowed = name.utf8.allSatisfy {
      (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
    }
    guard allowed, !name.isEmpty, name.utf8.count <= 200, !name.contains("..") else {
      throw NCMBError.invalid("fileName")
    }
  }
}
