import Datastore
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// What one server allows a request and a client, set by the board's owner (`forum serve`'s
/// options). 0 turns a limit off.
public struct ServeLimits: Sendable, Equatable {
  /// Seconds the statements of one request may run; past it they are stopped (E500001).
  public var timeLimitSeconds: Double
  /// Sign-ups (`POST /users`) a minute from one address.
  public var signUpsPerMinute: Int
  /// Logins (`/login`) a minute from one address.
  public var loginsPerMinute: Int
  /// Writes (anything but GET) a minute by one session.
  public var userWritesPerMinute: Int
  /// Writes a minute from one address, all its sessions together.
  public var addressWritesPerMinute: Int
  /// Reads (GET) one session runs at once; more are refused at once, so that a few slow queries
  /// cannot hold every worker.
  public var readsAtOnce: Int
  /// Bytes of JSON the objects one app user created may hold together (`storedBytes`); a
  /// write that grows them past it is refused (E413002). 0: no limit.
  public var storageBytesPerUser: Int
  /// Bytes of answers (GET) a minute to one app user, all its sessions together; reads without
  /// a session are counted per address. A read refused for its size (E400002) costs
  /// `NCMBQuery.answerBudget`. 0: no limit.
  public var readBytesPerMinute: Int
  /// Requests one app user (or, without a session, one address) has waiting on the change feed
  /// at once (`forum/changes?wait=`, `forum/feed`); more are refused (E429001). 0: no limit.
  public var feedWaitsPerUser: Int
  /// Requests waiting on the change feed from one address, all its users together. 0: no limit.
  public var feedWaitsPerAddress: Int
  /// Database connections the server uses at once; one client address holds at most three
  /// quarters of them (`StorePool`), and a request past either waits its turn. 0: no limit.
  public var databaseConnections: Int
  /// Seconds a read (GET) refused E429001 waits before its answer (at most the wait the
  /// refusal names, which is at least a second): a reader spinning on refusals is slowed to a
  /// few a second per connection. 0: answered at once.
  public var refusalPauseSeconds: Double

  public init(
    timeLimitSeconds: Double = 5, signUpsPerMinute: Int = 30, loginsPerMinute: Int = 60,
    userWritesPerMinute: Int = 600, addressWritesPerMinute: Int = 6000, readsAtOnce: Int = 2,
    storageBytesPerUser: Int = 64 << 20, readBytesPerMinute: Int = 512 << 20,
    feedWaitsPerUser: Int = 4, feedWaitsPerAddress: Int = 64, databaseConnections: Int = 32,
    refusalPauseSeconds: Double = 1
  ) {
    self.feedWaitsPerUser = feedWaitsPerUser
    self.feedWaitsPerAddress = feedWaitsPerAddress
    self.databaseConnections = databaseConnections
    self.refusalPauseSeconds = refusalPauseSeconds
    self.readBytesPerMinute = readBytesPerMinute
    self.storageBytesPerUser = storageBytesPerUser
    self.readsAtOnce = readsAtOnce
    self.timeLimitSeconds = timeLimitSeconds
    self.signUpsPerMinute = signUpsPerMinute
    self.loginsPerMinute = loginsPerMinute
    self.userWritesPerMinute = userWritesPerMinute
    self.addressWritesPerMinute = addressWritesPerMinute
  }

  /// `forum serve`'s defaults.
  public static let defaults = ServeLimits()
  /// No limit at all (an embedded service in tests).
  public static let none = ServeLimits(
    timeLimitSeconds: 0, signUpsPerMinute: 0, loginsPerMinute: 0, userWritesPerMinute: 0,
    addressWritesPerMinute: 0, readsAtOnce: 0, storageBytesPerUser: 0, readBytesPerMinute: 0,
    feedWaitsPerUser: 0, feedWaitsPerAddress: 0, databaseConnections: 0, refusalPauseSeconds: 0)
}

/// Token buckets in memory, one per limit and address or session: each holds up to a minute's
/// allowance and fills again at that rate, so a client may spend a minute's worth at once and then
/// one at a time as they come back. A refusal takes nothing.
final class RateLimits: Sendable {
  enum Kind: String {
    case signUp = "sign-ups from this address"
    case login = "logins from this address"
    case addressWrite = "writes from this address"
    case userWrite = "writes by this session"
    case wrongPassword = "wrong passwords for this user name"
    case userRead = "answers to this app user"
    case addressRead = "answers without a session to this address"
  }

  private struct Bucket {
    var tokens: Double
    var stamp: Double
  }

  private let limits: ServeLimits
  private let buckets = Mutex<[String: Bucket]>([:])
  /// Past this many buckets, the full ones (the same as none) are dropped.
  static let pruneAbove = 50_000

  init(_ limits: ServeLimits) {
    self.limits = limits
  }

  /// nil when `request` may go on, else its E429001 answer. Only what it counts is taken: a
  /// GET that is not a login is never limited here.
  func refusal(_ request: HTTPRequest, prefix: String) -> NCMBError? {
    // The prefix by its bytes: `hasPrefix` on text compared Characters, a tenth of a cached
    // read's own time.
    guard request.path.utf8.starts(with: prefix.utf8) else { return nil }
    var path = Substring(request.path.utf8.dropFirst(prefix.utf8.count))
    if path.hasSuffix("/") { path = path.dropLast() }
    let address = request.clientAddress
    if request.method == "GET", path != "login", let refusal = readRefusal(before: request) {
      return refusal
    }
    var asks: [(Kind, String, Int)] = []
    if path == "login" {
      asks.append((.login, address, limits.loginsPerMinute))
    } else if path == "users" && request.method == "POST" {
      asks.append((.signUp, address, limits.signUpsPerMinute))
    } else if request.method != "GET" {
      asks.append((.addressWrite, address, limits.addressWritesPerMinute))
      if let token = request.header("X-NCMB-Apps-Session-Token") {
        asks.append((.userWrite, token, limits.userWritesPerMinute))
      }
    }
    asks.removeAll { $0.2 <= 0 || ($0.0 != .userWrite && $0.1.isEmpty) }
    guard !asks.isEmpty else { return nil }
    let now = MonotonicClock.now()
    return buckets.withLock { buckets in
      var taken: [(String, Bucket)] = []
      for (kind, key, perMinute) in asks {
        let name = kind.rawValue + "\u{0}" + key
        let capacity = Double(perMinute)
        let rate = capacity / 60
        var bucket = buckets[name] ?? Bucket(tokens: capacity, stamp: now)
        bucket.tokens = min(capacity, bucket.tokens + (now - bucket.stamp) * rate)
        bucket.stamp = now
        guard bucket.tokens >= 1 else {
          let wait = Int(((1 - bucket.tokens) / rate).rounded(.up))
          return NCMBError(
            status: 429, code: "E429001",
            message:
              "Too many requests. (\(kind.rawValue) are limited to \(perMinute) a minute; "
              + "try again in \(max(1, wait)) s)")
        }
        bucket.tokens -= 1
        taken.append((name, bucket))
      }
      for (name, bucket) in taken { buckets[name] = bucket }
      if buckets.count > RateLimits.pruneAbove { prune(now, &buckets) }
      return nil
    }
  }

  /// E429001 when the user name `name` (in any case, whether someone has it or not) had
  /// `loginsPerMinute` wrong passwords in the last minute, from any addresses: its logins then
  /// wait, so a guesser spread over many addresses is slowed too. Takes nothing.
  func wrongPasswordRefusal(_ name: String) -> NCMBError? {
    let perMinute = limits.loginsPerMinute
    guard perMinute > 0 else { return nil }
    let key = RateLimits.nameKey(name)
    let now = MonotonicClock.now()
    return buckets.withLock { buckets in
      guard let bucket = buckets[key] else { return nil }
      let rate = Double(perMinute) / 60
      let tokens = min(Double(perMinute), bucket.tokens + (now - bucket.stamp) * rate)
      guard tokens < 1 else { return nil }
      let wait = Int(((1 - tokens) / rate).rounded(.up))
      return NCMBError(
        status: 429, code: "E429001",
        message:
          "Too many requests. (\(Kind.wrongPassword.rawValue) are limited to \(perMinute) a "
          + "minute; try again in \(max(1, wait)) s)")
    }
  }

  /// The bucket of a user name: in lower case, its first 200 bytes (a name is at most 40
  /// characters; a longer one, which nobody has, must not make the limits hold megabytes).
  private static func nameKey(_ name: String) -> String {
    Kind.wrongPassword.rawValue + "\u{0}"
      + String(decoding: Array(name.lowercased().utf8.prefix(200)), as: UTF8.self)
  }

  /// Counts a wrong password (or an unknown name) against `name`.
  func noteWrongPassword(_ name: String) {
    let perMinute = limits.loginsPerMinute
    guard perMinute > 0 else { return }
    let key = RateLimits.nameKey(name)
    let now = MonotonicClock.now()
    let capacity = Double(perMinute)
    buckets.withLock { buckets in
      var bucket = buckets[key] ?? Bucket(tokens: capacity, stamp: now)
      bucket.tokens = max(
        0, min(capacity, bucket.tokens + (now - bucket.stamp) * capacity / 60) - 1)
      bucket.stamp = now
      buckets[key] = bucket
      if buckets.count > RateLimits.pruneAbove { prune(now, &buckets) }
    }
  }

  // MARK: Bytes read

  /// The app user each session token read as, learned at its reads: a known session's reads
  /// are refused before the database is touched once its user is over the budget.
  private let readers = Mutex<[String: String]>([:])

  /// The bucket a GET is charged to: its app user's (`user`, once its session is known), else
  /// its address's. Reads without a session are counted per address, not left free: a bomb
  /// anyone may read costs as much without a session, and an honest app's reads without one
  /// (a page of threads, a few kilobytes) stay far below a minute's budget even for many
  /// people behind one address.
  struct Reader {
    fileprivate let name: String
    fileprivate let token: String?
    fileprivate let user: String?
  }

  func reader(_ request: HTTPRequest, user: String?) -> Reader? {
    guard limits.readBytesPerMinute > 0, request.method == "GET" else { return nil }
    let token = request.header("X-NCMB-Apps-Session-Token")
    if let user, token != nil {
      return Reader(name: Kind.userRead.rawValue + "\u{0}" + user, token: token, user: user)
    }
    return Reader(
      name: Kind.addressRead.rawValue + "\u{0}" + request.clientAddress, token: nil, user: nil)
  }

  /// Before anything is looked up: E429001 when the request's session is known to belong to an
  /// app user over the budget, or (without a session) its address is.
  private func readRefusal(before request: HTTPRequest) -> NCMBError? {
    guard limits.readBytesPerMinute > 0 else { return nil }
    let name: String
    if let token = request.header("X-NCMB-Apps-Session-Token") {
      let user = readers.withLock { $0[token] }
      guard let user else { return nil }
      name = Kind.userRead.rawValue + "\u{0}" + user
    } else {
      name = Kind.addressRead.rawValue + "\u{0}" + request.clientAddress
    }
    return readRefusal(name)
  }

  /// Once the session is known (a new session of a user over the budget), before the cache
  /// and the route: E429001 when `reader` owes bytes.
  func readRefusal(_ reader: Reader?) -> NCMBError? {
    guard let reader else { return nil }
    if let token = reader.token, let user = reader.user {
      readers.withLock { readers in
        if readers[token] != user {
          if readers.count > RateLimits.pruneAbove { readers.removeAll() }
          readers[token] = user
        }
      }
    }
    return readRefusal(reader.name)
  }

  private func readRefusal(_ name: String) -> NCMBError? {
    let perMinute = limits.readBytesPerMinute
    let rate = Double(perMinute) / 60
    let now = MonotonicClock.now()
    return buckets.withLock { buckets in
      guard let bucket = buckets[name] else { return nil }
      let tokens = min(Double(perMinute), bucket.tokens + (now - bucket.stamp) * rate)
      guard tokens <= 0 else { return nil }
      let wait = Int((-tokens / rate).rounded(.up))
      let kind = name.hasPrefix(Kind.userRead.rawValue) ? Kind.userRead : Kind.addressRead
      return NCMBError(
        status: 429, code: "E429001",
        message:
          "Too many requests. (\(kind.rawValue) are limited to \(RateLimits.shownBytes(perMinute)) "
          + "a minute; try again in \(max(1, wait)) s)")
    }
  }

  /// Takes `bytes` from `reader`'s bucket, which may go below zero (the next read waits until
  /// it refills), though never owing more than a minute's budget.
  func charge(_ reader: Reader?, bytes: Int) {
    guard let reader else { return }
    let capacity = Double(limits.readBytesPerMinute)
    let now = MonotonicClock.now()
    buckets.withLock { buckets in
      var bucket = buckets[reader.name] ?? Bucket(tokens: capacity, stamp: now)
      bucket.tokens = min(capacity, bucket.tokens + (now - bucket.stamp) * capacity / 60)
      bucket.tokens = max(-capacity, bucket.tokens - Double(bytes))
      bucket.stamp = now
      buckets[reader.name] = bucket
      if buckets.count > RateLimits.pruneAbove { prune(now, &buckets) }
    }
  }

  /// Serves a read charged to `reader`: E429001 when it owes bytes, else its answer's bytes
  /// are taken after; one refused for its size (E400002) costs the whole answer budget.
  func charged(_ reader: Reader?, _ read: () throws -> HTTPResponse) throws -> HTTPResponse {
    if let refusal = readRefusal(reader) { throw refusal }
    do {
      let response = try read()
      charge(reader, bytes: response.body.count)
      return response
    } catch let error as DatastoreError {
      if case .store(.answerTooLarge)? = error.reason {
        charge(reader, bytes: NCMBQuery.answerBudget)
      }
      throw error
    }
  }

  /// `512 MiB`, `256 KiB`, `1000 bytes`.
  static func shownBytes(_ bytes: Int) -> String {
    if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
  }

  /// Reads running now, by session token.
  private let reading = Mutex<[String: Int]>([:])

  /// Counts a GET in while it runs: nil when not counted (no limit, not a GET, no session),
  /// else the key to give to `leave`; or the E429001 answer when its session already runs
  /// `readsAtOnce` reads.
  func enter(_ request: HTTPRequest) -> (key: String?, refusal: NCMBError?) {
    let limit = limits.readsAtOnce
    guard limit > 0, request.method == "GET" else { return (nil, nil) }
    // Reads without a session are not counted: many apps' first reads come from one address
    // (a carrier's NAT, a proxy); the time limit bounds them.
    guard let key = request.header("X-NCMB-Apps-Session-Token") else { return (nil, nil) }
    return reading.withLock { reading in
      let running = reading[key, default: 0]
      guard running < limit else {
        return (
          nil,
          NCMBError(
            status: 429, code: "E429001",
            message:
              "Too many requests. (one session runs at most \(limit) reads at once; "
              + "wait for an answer first)")
        )
      }
      reading[key] = running + 1
      return (key, nil)
    }
  }

  func leave(_ key: String?) {
    guard let key else { return }
    reading.withLock { reading in
      let running = reading[key, default: 1] - 1
      reading[key] = running > 0 ? running : nil
    }
  }

  /// Drops the buckets that have filled again; if that is not enough (a flood of made-up
  /// sessions from very many addresses), all of them: the limits forget rather than grow.
  private func prune(_ now: Double, _ buckets: inout [String: Bucket]) {
    buckets = buckets.filter { name, bucket in
      let perMinute = perMinute(of: name)
      return bucket.tokens + (now - bucket.stamp) * Double(perMinute) / 60 < Double(perMinute)
    }
    if buckets.count > RateLimits.pruneAbove { buckets.removeAll() }
  }

  private func perMinute(of name: String) -> Int {
    if name.hasPrefix(Kind.signUp.rawValue) { return limits.signUpsPerMinute }
    if name.hasPrefix(Kind.login.rawValue) || name.hasPrefix(Kind.wrongPassword.rawValue) {
      return limits.loginsPerMinute
    }
    if name.hasPrefix(Kind.addressWrite.rawValue) { return limits.addressWritesPerMinute }
    if name.hasPrefix(Kind.userRead.rawValue) || name.hasPrefix(Kind.addressRead.rawValue) {
      return limits.readBytesPerMinute
    }
    return limits.userWritesPerMinute
  }
}

/// The monotonic clock the limits count by.
enum MonotonicClock {
  static func now() -> Double {
    var clock = timespec()
    clock_gettime(CLOCK_MONOTONIC, &clock)
    return Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
  }
}
