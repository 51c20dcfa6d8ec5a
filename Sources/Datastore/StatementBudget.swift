import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A time limit and a stop for the statements one request runs on a connection, which the engine
/// enforces while a statement runs (SQLite: a progress handler; PostgreSQL: the wait for the
/// answer cancels the statement on the server). Between requests it is not armed and stops
/// nothing. `cancel` may be called from any thread.
public final class StatementBudget: Sendable {
  private let state = Mutex(BudgetState())
  static let probeInterval = 0.05

  public init() {}

  /// Arms the budget for one request: its statements may run until `seconds` from now (nil or
  /// 0: no limit). `clientGone` tells whether the client is still there.
  public func begin(seconds: Double?, clientGone: (@Sendable () -> Bool)? = nil) {
    state.withLock { $0.begin(seconds: seconds, clientGone: clientGone) }
  }

  /// The request is done: statements run after this are not limited.
  public func end() {
    state.withLock { $0.end() }
  }

  /// Stops the statement running now (if any) and those after it, until the next `begin`
  /// (`serverStopping` stays for good).
  public func cancel(_ why: StatementStop) {
    state.withLock { $0.cancel(why) }
  }

  /// Why the running statement must stop, or nil. Called by the engines while a statement runs.
  public func check() -> StatementStop? {
    state.withLock { $0.check() }
  }

  /// True once the server stops (`cancel(.serverStopping)`), armed or not: a wait for another
  /// process's lock between requests (a batch's `BEGIN IMMEDIATE`) ends on it.
  public var serverStopping: Bool {
    state.withLock { $0.cancelled == .serverStopping }
  }

  /// Why the budget stopped a statement of this request, if it did.
  public var stopped: StatementStop? {
    state.withLock { $0.fired }
  }

  /// The error a stopped statement becomes.
  public var error: DatastoreError? {
    stopped.map { DatastoreError(.systemError, reason: $0) }
  }

  static func now() -> Double {
    var clock = timespec()
    clock_gettime(CLOCK_MONOTONIC, &clock)
    return Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
  }
}

/// What a `StatementBudget` holds, behind its lock.
private struct BudgetState {
  var armed = false
  var deadline: Double = .infinity
  var limit: Double = 0
  var cancelled: StatementStop?
  var fired: StatementStop?
  /// Asked at most every `probeInterval` while armed: true when the client hung up.
  var clientGone: (@Sendable () -> Bool)?
  var nextProbe: Double = 0

  mutating func begin(seconds: Double?, clientGone: (@Sendable () -> Bool)?) {
    let now = StatementBudget.now()
    armed = true
    limit = seconds ?? 0
    deadline = (seconds ?? 0) > 0 ? now + seconds! : .infinity
    if cancelled != .serverStopping { cancelled = nil }
    fired = nil
    self.clientGone = clientGone
    nextProbe = now + StatementBudget.probeInterval
  }

  mutating func end() {
    armed = false
    clientGone = nil
  }

  mutating func cancel(_ why: StatementStop) {
    if cancelled != .serverStopping { cancelled = why }
  }

  mutating func check() -> StatementStop? {
    guard armed else { return nil }
    if let fired { return fired }
    if let cancelled {
      fired = cancelled
      return cancelled
    }
    let now = StatementBudget.now()
    if now >= deadline {
      fired = .timeLimit(seconds: limit)
      return fired
    }
    if let clientGone, now >= nextProbe {
      nextProbe = now + StatementBudget.probeInterval
      if clientGone() {
        fired = .clientGone
        return fired
      }
    }
    return nil
  }
}
