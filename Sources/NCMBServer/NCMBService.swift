@_spi(Server) import Datastore
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The board a service opened first (set once, by the first open, before any request).
private final class BoardIdentity: Sendable {
  private let first = Mutex<String?>(nil)
  var id: String? { first.withLock { $0 } }
  /// Keeps `id` unless one is kept already.
  func note(_ id: String) { first.withLock { if $0 == nil { $0 = id } } }
}

/// NCMB's REST API (2013-09-01) over a `Datastore`: signature, sessions, classes, users, login,
/// roles, files. Knows no threads: the board's rules are the engine's, and what the application
/// adds comes in as an `NCMBPolicy`. Holds no state of its own: keys and sessions are read from
/// the database on every request. Each request passes one pipeline: limits → signature →
/// session → read cache → route (`NCMBRoute`) → its resource's controller (`Controllers/`).
public final class NCMBService: HTTPHandler, Sendable {
  /// The prefix every NCMB path starts with.
  public static let apiVersion = "2013-09-01"
  /// Largest JSON body taken (`E413002` above it).
  public static let maximumJSONBytes = 1 << 20

  let pool: StorePool
  private let policy: NCMBPolicy
  private let clock: @Sendable () -> Int64
  private let recheck: Int64
  /// The time limit of each request and the rate limits (`RateLimits.swift`).
  public let limits: ServeLimits
  let rateLimits: RateLimits
  /// Wakes the requests waiting on the change feed (`FeedWaits`): one watcher per server.
  let feed: FeedWatcher

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
    pool = StorePool(capacity: limits.databaseConnections) {
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
      board.note(store.boardId)
      return store
    }
    self.policy = policy
    self.clock = clock
    feed = FeedWatcher(
      perUser: limits.feedWaitsPerUser, perAddress: limits.feedWaitsPerAddress,
      open: { try Datastore.open(location) })
    let (queues, keys, boardId) = try pool.with {
      ($0.store.commitsInGroups, try $0.store.applicationKeys(), $0.store.boardId)
    }
    published = Mutex(keys)
    self.boardId = boardId
    writers = nil
    if queues {
      writers = WriteQueue(
        run: { [unowned self] jobs in self.write(jobs) },
        between: { [unowned self] idle in
          // Idle: a few steps, so what the last batches queued is indexed before a pause.
          _ = try? self.pool.with { for _ in 0..<(idle ? 4 : 1) where $0.store.tidy(idle: idle) {} }
        })
    }
  }

  /// Requests that may write wait here and are written in batches, one commit for all the
  /// requests waiting (`WriteQueue`), where each would otherwise wait for the database lock
  /// (SQLite's busy handler naps 10 ms) or for the rows another holds to its commit (PostgreSQL:
  /// a thread's counters), and pay a commit of its own. Nothing of it outlives a batch: other
  /// servers on the same PostgreSQL database write beside it.
  /// Unchecked: set once by `init`, before the service is shared.
  nonisolated(unsafe) private(set) var writers: WriteQueue?

  /// What `GET forum/keys` answers: the keys as the last admitted request read them (read at
  /// start), and the board's id, which never changes (`BoardIdentity`). The one unsigned path
  /// borrows no database connection, so it needs no place among an address's share of them
  /// (`StorePool`). Keys rotated by the owner (`forum keys --rotate`) are published by the
  /// first signed request after it: a client with the old ones is refused `E404005` and asks
  /// again.
  private let published: Mutex<ApplicationKeys>
  private let boardId: String

  /// The board's keys as they are now.
  public func keys() throws -> ApplicationKeys {
    try pool.with { try $0.store.applicationKeys() }
  }

  /// Stops every request's statements now and those of requests still to come (a second
  /// SIGTERM): each is answered E500001, its write undone.
  public func stopRunning() { pool.stopAll() }

  // MARK: The pipeline: limits → signature → session → cache → route → controller

  /// One controller per resource, by the route table (`NCMBRoute.table`).
  private static func controller(for resource: NCMBRoute.Resource) -> any NCMBController {
    switch resource {
    case .classes: ObjectsController()
    case .users, .login, .logout: UsersController()
    case .roles: RolesController()
    case .files: FilesController()
    case .batch: BatchController()
    case .forum: ForumExtensionsController()
    }
  }

  public func respond(to request: HTTPRequest) -> HTTPResponse {
    let response = respondWaitingOnTheFeed(request)
    // A read refused by a budget (E429001: bytes a minute, reads at once) is answered after a
    // pause, so that a reader spinning on refusals costs the server a few answers a second on
    // each connection rather than thousands (issue 28: under the bombs, answering them took a
    // third of a core from honest requests' threads). Only the connection's own thread waits.
    if response.status == 429, request.method == "GET", limits.refusalPauseSeconds > 0,
      !NCMBService.isLogin(request)
    {
      usleep(UInt32(min(limits.refusalPauseSeconds, 10) * 1_000_000))
    }
    return response
  }

  /// One pass of the pipeline. A feed request that is to wait or stream comes out as
  /// `FeedWait` or `FeedStreamStart`, its connection and read slot given back (`FeedWaits`).
  /// `waiting`: the request holds a place among the feed's waiters, which bound it in place of
  /// the session's reads at once (its waiters woken together must not refuse each other).
  func respondOnce(to request: HTTPRequest, waiting: Bool = false) throws -> HTTPResponse {
    // Limits first: budgets per address and per session (`RateLimits`), before any key is looked up.
    if let refusal = rateLimits.refusal(request, prefix: NCMBRoute.prefix) {
      return failure(refusal)
    }
    do {
      try NCMBRoute.checkVersion(request.path)
      if request.method == "GET", request.path == NCMBService.forumKeysPath {
        return try forumKeys()
      }
      // Unsigned: refused before the database.
      _ = try NCMBSignature.headers(request)
      // A password is hashed (Argon2id, 64 MiB, a tenth of a second or more) outside any
      // transaction: a login, a password sign-up or change does not wait in a write batch, nor
      // hold one while it hashes.
      if let writers, request.method != "GET", !NCMBService.hashesPassword(request),
        !ForumExtensionsController.onlyReads(request.path)
      {
        // Admitted before it queues: a request that is not signed right, or names a session
        // that is unknown or over (the keys are in every copy of an app; the session is what
        // authorizes), never waits among honest writes, nor holds a batch's transaction.
        try pool.with(party: request.clientAddress, wait: waitSeconds) { pooled in
          _ = try session(request, pooled.store, try admit(request, pooled))
        }
        return writers.submit(request)
      }
      let (slot, busy) = waiting ? (nil, nil) : rateLimits.enter(request)
      if let busy { return failure(busy) }
      defer { rateLimits.leave(slot) }
      return try pool.with(party: request.clientAddress, wait: waitSeconds) { pooled in
        pooled.budget.begin(seconds: limits.timeLimitSeconds, clientGone: request.clientGone)
        defer { pooled.budget.end() }
        // A read that wrote (`GET /logout`) is seen by every connection's next request.
        let before = pooled.store.ownChanges
        defer { if pooled.store.ownChanges != before { noteCommit() } }
        let mark = try admit(request, pooled)
        return try serve(request, mark, pooled)
      }
    } catch let wait as FeedWait {
      throw wait
    } catch let start as FeedStreamStart {
      throw start
    } catch {
      return failure(error)
    }
  }

  /// How long a request waits for a database connection (`StorePool`): its time limit, else 30 s.
  private var waitSeconds: Double { limits.timeLimitSeconds > 0 ? limits.timeLimitSeconds : 30 }

  /// `GET /login`, which has budgets of its own (a refused login is answered at once).
  static func isLogin(_ request: HTTPRequest) -> Bool {
    var path = Substring(request.path)
    guard path.hasPrefix(NCMBRoute.prefix) else { return false }
    path = path.dropFirst(NCMBRoute.prefix.count)
    return path == "login" || path == "login/"
  }

  /// The one unsigned path: what forum clients sign with.
  static let forumKeysPath = NCMBRoute.prefix + "forum/keys"

  /// `GET forum/keys`: the board's application and client keys and its id, for forum's remote
  /// engine to sign with. They identify an application, not a person (every copy of an NCMB
  /// app carries them): the session authorizes, and the engine holds every rule.
  private func forumKeys() throws -> HTTPResponse {
    let keys = published.withLock { $0 }
    return NCMBService.json(
      .object([
        "applicationKey": .string(keys.applicationKey), "clientKey": .string(keys.clientKey),
        "boardId": .string(boardId),
      ]))
  }

  /// A login, or a `POST users` / `PUT users/ID` whose body sets a password.
  static func hashesPassword(_ request: HTTPRequest) -> Bool {
    var path = Substring(request.path)
    guard path.hasPrefix(NCMBRoute.prefix) else { return false }
    path = path.dropFirst(NCMBRoute.prefix.count)
    if path.hasSuffix("/") { path = path.dropLast() }
    if path == "login" { return true }
    guard path == "users" || path.hasPrefix("users/") else { return false }
    return (try? NCMBJSON.object(request.body))?["password"] != nil
  }

  /// Head admission (`HTTPHandler.admit`): a request whose body is still to come is refused at
  /// once, its body never read, unless its application key and signature are the board's (they
  /// cover method, host, path and query, not the body) and its path is the API's.
  public func admit(_ head: HTTPRequestHead) -> HTTPResponse? {
    do {
      try admit(HTTPRequest(head))
      return nil
    } catch {
      return failure(error)
    }
  }

  /// Checks a request's signature (application key, timestamp, HMAC) against the board's keys
  /// and its body's size: what a request passes before its session is looked at or it waits
  /// for a write. Needs only the request's head and body length.
  public func admit(_ request: HTTPRequest) throws {
    try NCMBRoute.checkVersion(request.path)
    _ = try NCMBSignature.headers(request)
    try pool.with(party: request.clientAddress, wait: waitSeconds) { pooled in
      _ = try admit(request, pooled)
    }
  }

  /// `admit` on a borrowed connection; returns the database's state mark for the session.
  private func admit(_ request: HTTPRequest, _ pooled: StorePool.Pooled) throws -> StateMark? {
    let now = clock()
    let mark = try state(pooled, now: now)
    guard
      let keys = try pooled.cache.keys(
        now: now, recheck: recheck,
        { try pooled.store.existingApplicationKeys().map(NCMBSignature.Keys.init) })
    else {
      throw NCMBError.noSuchApplication
    }
    published.withLock { if $0 != keys.text { $0 = keys.text } }
    try NCMBSignature.verify(request, keys: keys, now: now)
    guard
      request.body.count <= ForumExtensionsController.largestBody(request)
        || request.header(lowercased: "content-type")?.lowercased().contains("multipart/") == true
    else { throw NCMBError.tooLarge }
    return mark
  }

  /// The database as this connection sees it: the file is looked at every time (a removed
  /// board is E500001 at once), its state only when it may have changed.
  private func state(_ pooled: StorePool.Pooled, now: Int64) throws -> StateMark? {
    try pooled.store.checkInPlace()
    let store = pooled.store
    return try pooled.cache.revalidate(
      generation: pooled.generation, now: now, recheck: recheck, look: { try store.stateMark() },
      written: { try store.writtenObjects(after: $0, limit: KeptAnswers.writtenLimit) },
      rules: { store.rules })
  }

  /// An admitted request: its session, then (for a read) the kept answer, then its route's
  /// controller.
  private func serve(_ request: HTTPRequest, _ mark: StateMark?, _ pooled: StorePool.Pooled)
    throws -> HTTPResponse
  {
    let store = pooled.store
    let client = try session(request, store, mark)
    let route = try NCMBRoute(path: request.path)
    let call = NCMBCall(
      request: request, route: route, store: store, client: client, policy: policy,
      limits: limits, rates: rateLimits)
    let controller = NCMBService.controller(for: route.resource)
    // A GET's answer is charged to its reader's bytes a minute, kept answers too (they cost
    // the wire as much); one refused for its size costs the whole answer budget.
    // The reads inside a `POST batch` are charged each on its own (`BatchController`).
    let reader = route.resource == .login ? nil : rateLimits.reader(request, user: client.userId)
    return try rateLimits.charged(reader) { () throws -> HTTPResponse in
      guard call.answersInWire else {
        return try answer(request, route, call, controller, client, pooled)
      }
      // The engine's refusal as the board's wire says it, as the board's own endpoints do.
      do {
        return try answer(request, route, call, controller, client, pooled)
      } catch let error as DatastoreError
        where !(error.code == .authentication && error.detail == nil) && !error.isStop
      {
        return ForumWire.refusal(error)
      }
    }
  }

  /// The controller's answer, or for a cacheable GET the kept one.
  private func answer(
    _ request: HTTPRequest, _ route: NCMBRoute, _ call: NCMBCall,
    _ controller: any NCMBController, _ client: DatastoreClient, _ pooled: StorePool.Pooled
  ) throws -> HTTPResponse {
    guard request.method == "GET", route.isCacheable else {
      return try NCMBService.refusal(of: client) { try controller.respond(to: call) }
    }
    // The two shapes of one answer are kept apart.
    let key = ReadCache.key(request, client.principals) + (call.answersInWire ? "\nwire" : "")
    if let kept = pooled.cache.answer(for: key) { return kept }
    let response = try NCMBService.refusal(of: client) { try controller.respond(to: call) }
    pooled.cache.keep(
      response, for: key,
      dependsOn: .of(route, request, body: response.body, rules: pooled.store.rules))
    return response
  }

  /// The caller: no session token is a caller without a session (`*` alone); a token that is
  /// unknown or has ended is refused as such.
  func session(_ request: HTTPRequest, _ store: Datastore, _ mark: StateMark?) throws
    -> DatastoreClient
  {
    do {
      return try store.client(
        sessionToken: request.header(lowercased: "x-ncmb-apps-session-token"), known: mark)
    } catch let error as DatastoreError where error.code == .authentication {
      throw NCMBError.unknownSession
    }
  }

  /// The engine's "no user" (`E401001` with no reason) said as what it is for this caller: a
  /// request that needed a session and sent none.
  private static func refusal<T>(of client: DatastoreClient, _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as DatastoreError
      where error.code == .authentication && error.detail == nil
    {
      throw client.userId == nil ? NCMBError.noSession : NCMBError.unknownSession
    }
  }

  /// A batch of admitted requests that may write: each in its own savepoint of one
  /// transaction, so a refused one undoes itself alone and gets its own error; all answered
  /// after the commit.
  private func write(_ jobs: [WriteQueue.Job]) {
    do {
      try pool.with { pooled in
        var answers = [HTTPResponse?](repeating: nil, count: jobs.count)
        let before = pooled.store.ownChanges
        // Looked at before the transaction: a look inside it would read the batch's own rows,
        // which a rollback takes back, as written (`KeptAnswers.advance`).
        let mark = try state(pooled, now: clock())
        let errors = try pooled.store.group(jobs.count) { index in
          let request = jobs[index].request
          pooled.budget.begin(seconds: limits.timeLimitSeconds, clientGone: request.clientGone)
          defer { pooled.budget.end() }
          answers[index] = try serve(request, mark, pooled)
        }
        if pooled.store.ownChanges != before { noteCommit() }
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

  func failure(_ error: any Error) -> HTTPResponse {
    let error: NCMBError =
      switch error {
      case let error as NCMBError: error
      case let error as DatastoreError: NCMBError(error)
      default: .system
      }
    return HTTPResponse(status: error.status, headers: NCMBService.jsonHeaders, body: error.body)
  }
}
