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
/// the database on every request. It composes the pipeline each request passes, one stage a
/// type (`Pipeline/`): limits (`RateLimits`) → signature (`SignatureCheck`) → session
/// (`SessionLookup`) → read cache (`CachedReads`) → route (`NCMBRoute`) → its resource's
/// controller (`Controllers/`), run by `Dispatcher`; a request that may write joins the write
/// queue (`WriteQueue`, `WriteBatches`) only once it passed the signature and the session.
public final class NCMBService: HTTPHandler, Sendable {
  /// The prefix every NCMB path starts with.
  public static let apiVersion = "2013-09-01"
  /// Largest JSON body taken (`E413002` above it).
  public static let maximumJSONBytes = 1 << 20

  let pool: StorePool
  /// The time limit of each request and the rate limits (`RateLimits.swift`).
  public let limits: ServeLimits
  let rateLimits: RateLimits
  /// Wakes the requests waiting on the change feed (`FeedWaits`): one watcher per server.
  let feed: FeedWatcher
  let database: DatabaseState
  private let signature: SignatureCheck
  private let dispatcher: Dispatcher

  /// How late a write by another process on the same SQLite file (the prompt, `sqlite3`) may
  /// be seen: answers, sessions and keys are looked up again once the database's state was
  /// last looked at this long ago (`ReadCache`). This server's own writes are seen by the next
  /// request on every connection, at once.
  public static let recheckMilliseconds: Int64 = 10

  /// Requests that may write wait here and are written in batches, one commit for all the
  /// requests waiting (`WriteQueue`), where each would otherwise wait for the database lock
  /// (SQLite's busy handler naps 10 ms) or for the rows another holds to its commit (PostgreSQL:
  /// a thread's counters), and pay a commit of its own. Nothing of it outlives a batch: other
  /// servers on the same PostgreSQL database write beside it. Nil on an engine that does not
  /// commit in groups.
  let writers: WriteQueue?

  /// A service for the board at `location`. Makes the board's keys if it has none (see
  /// `Datastore.applicationKeys`): the caller is the board's owner. `clock` is milliseconds since
  /// 1970 (tests move it).
  public init(
    location: String, policy: NCMBPolicy = .none,
    clock: @escaping @Sendable () -> Int64 = { BackendDate.now() },
    recheckMilliseconds: Int64 = NCMBService.recheckMilliseconds, limits: ServeLimits = .none
  ) throws {
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
        // Once the board is known, opened without creating: a file removed after the look
        // above is an error, not a new empty board.
        store = try Datastore.open(location, existing: board.id != nil)
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
    feed = FeedWatcher(
      perUser: limits.feedWaitsPerUser, perAddress: limits.feedWaitsPerAddress,
      open: { try Datastore.open(location, existing: true) })
    let (queues, keys, boardId) = try pool.with {
      ($0.store.commitsInGroups, try $0.store.applicationKeys(), $0.store.boardId)
    }
    database = DatabaseState(pool: pool, feed: feed, clock: clock, recheck: recheckMilliseconds)
    signature = SignatureCheck(
      database: database, published: PublishedKeys(keys, boardId: boardId))
    dispatcher = Dispatcher(policy: policy, limits: limits, rateLimits: rateLimits)
    let batches = WriteBatches(database: database, dispatcher: dispatcher)
    writers =
      queues ? WriteQueue(run: { batches.write($0) }, between: { batches.tidy(idle: $0) }) : nil
  }

  /// The board's keys as they are now.
  public func keys() throws -> ApplicationKeys {
    try pool.with { try $0.store.applicationKeys() }
  }

  /// Stops every request's statements now and those of requests still to come (a second
  /// SIGTERM): each is answered E500001, its write undone.
  public func stopRunning() { pool.stopAll() }

  // MARK: The pipeline: limits → signature → session → cache → route → controller

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
      return NCMBService.failure(refusal)
    }
    do {
      try NCMBRoute.checkVersion(request.path)
      if request.method == "GET", request.path == PublishedKeys.path {
        return signature.published.answer()
      }
      // Unsigned: refused before the database.
      try SignatureCheck.headers(request)
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
          let mark = try signature.verify(request, pooled)
          _ = try SessionLookup.client(request, pooled.store, mark)
        }
        return writers.submit(request)
      }
      let (slot, busy) = waiting ? (nil, nil) : rateLimits.enter(request)
      if let busy { return NCMBService.failure(busy) }
      defer { rateLimits.leave(slot) }
      return try pool.with(party: request.clientAddress, wait: waitSeconds) { pooled in
        pooled.budget.begin(seconds: limits.timeLimitSeconds, clientGone: request.clientGone)
        defer { pooled.budget.end() }
        // A read that wrote (`GET /logout`) is seen by every connection's next request.
        let before = pooled.store.ownChanges
        defer { if pooled.store.ownChanges != before { database.noteCommit() } }
        let mark = try signature.verify(request, pooled)
        return try dispatcher.serve(request, mark, pooled)
      }
    } catch let wait as FeedWait {
      throw wait
    } catch let start as FeedStreamStart {
      throw start
    } catch {
      return NCMBService.failure(error)
    }
  }

  /// How long a request waits for a database connection (`StorePool`): its time limit, else 30 s.
  var waitSeconds: Double { limits.timeLimitSeconds > 0 ? limits.timeLimitSeconds : 30 }

  /// `GET /login`, which has budgets of its own (a refused login is answered at once).
  static func isLogin(_ request: HTTPRequest) -> Bool {
    var path = Substring(request.path)
    guard path.hasPrefix(NCMBRoute.prefix) else { return false }
    path = path.dropFirst(NCMBRoute.prefix.count)
    return path == "login" || path == "login/"
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
      return NCMBService.failure(error)
    }
  }

  /// Checks a request's signature (application key, timestamp, HMAC) against the board's keys
  /// and its body's size: what a request passes before its session is looked at or it waits
  /// for a write. Needs only the request's head and body length.
  public func admit(_ request: HTTPRequest) throws {
    try SignatureCheck.headers(request)
    try pool.with(party: request.clientAddress, wait: waitSeconds) { pooled in
      _ = try signature.verify(request, pooled)
    }
  }

  /// A refusal as NCMB answers it.
  static func failure(_ error: any Error) -> HTTPResponse {
    let error: NCMBError =
      switch error {
      case let error as NCMBError: error
      case let error as DatastoreError: NCMBError(error)
      default: .system
      }
    return HTTPResponse(status: error.status, headers: NCMBService.jsonHeaders, body: error.body)
  }
}
