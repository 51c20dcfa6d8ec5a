import Datastore

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

  public init(
    timeLimitSeconds: Double = 5, signUpsPerMinute: Int = 30, loginsPerMinute: Int = 60,
    userWritesPerMinute: Int = 600, addressWritesPerMinute: Int = 6000, readsAtOnce: Int = 2,
    storageBytesPerUser: Int = 64 << 20
  ) {
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
    addressWritesPerMinute: 0, readsAtOnce: 0, storageBytesPerUser: 0)
}

/// Token buckets in memory, one per limit and address or session: each holds up to a minute's
/// allowance and fills again at that rate, so a client may spend a minute's worth at once and then
/// one at a time as they come back. A refusal takes nothing.
final class RateLimits: @unchecked Sendable {
  enum Kind: String {
    case signUp = "sign-ups from this address"
    case login = "logins from this address"
    case addressWrite = "writes from this address"
    case userWrite = "writes by this session"
    case wrongPassword = "wrong passwords for this user name"
  }

  private struct Bucket {
    var tokens: Double
    var stamp: Double
  }

  private let limits: ServeLimits
  private var buckets: [String: Bucket] = [:]
  private var mutex = pthread_mutex_t()
  /// Past this many buckets, the full ones (the same as none) are dropped.
  static let pruneAbove = 50_000

  init(_ limits: ServeLimits) {
    self.limits = limits
    pthread_mutex_init(&mutex, nil)
  }

  deinit { pthread_mutex_destroy(&mutex) }

  /// nil when `request` may go on, else its E429001 answer. Only what it counts is taken: a
  /// GET that is not a login is never limited here.
  func refusal(_ request: HTTPRequest, prefix: String) -> NCMBError? {
    var path = Substring(request.path)
    guard path.hasPrefix(prefix) else { return nil }
    path = path.dropFirst(prefix.count)
    if path.hasSuffix("/") { path = path.dropLast() }
    let address = request.clientAddress
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
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
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
    if buckets.count > RateLimits.pruneAbove { prune(now) }
    return nil
  }

  /// E429001 when the user name `name` (in any case, whether someone has it or not) had
  /// `loginsPerMinute` wrong passwords in the last minute, from any addresses: its logins then
  /// wait, so a guesser spread over many addresses is slowed too. Takes nothing.
  func wrongPasswordRefusal(_ name: String) -> NCMBError? {
    let perMinute = limits.loginsPerMinute
    guard perMinute > 0 else { return nil }
    let key = RateLimits.nameKey(name)
    let now = MonotonicClock.now()
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
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
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    var bucket = buckets[key] ?? Bucket(tokens: capacity, stamp: now)
    bucket.tokens = max(0, min(capacity, bucket.tokens + (now - bucket.stamp) * capacity / 60) - 1)
    bucket.stamp = now
    buckets[key] = bucket
    if buckets.count > RateLimits.pruneAbove { prune(now) }
  }

  /// Reads running now, by session token.
  private var reading: [String: Int] = [:]

  /// Counts a GET in while it runs: nil when not counted (no limit, not a GET, no session),
  /// else the key to give to `leave`; or the E429001 answer when its session already runs
  /// `readsAtOnce` reads.
  func enter(_ request: HTTPRequest) -> (key: String?, refusal: NCMBError?) {
    let limit = limits.readsAtOnce
    guard limit > 0, request.method == "GET" else { return (nil, nil) }
    // Reads without a session are not counted: many apps' first reads come from one address
    // (a carrier's NAT, a proxy); the time limit bounds them.
    guard let key = request.header("X-NCMB-Apps-Session-Token") else { return (nil, nil) }
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
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

  func leave(_ key: String?) {
    guard let key else { return }
    pthread_mutex_lock(&mutex)
    let running = reading[key, default: 1] - 1
    reading[key] = running > 0 ? running : nil
    pthread_mutex_unlock(&mutex)
  }

  /// Drops the buckets that have filled again; if that is not enough (a flood of made-up
  /// sessions from very many addresses), all of them: the limits forget rather than grow.
  private func prune(_ now: Double) {
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
