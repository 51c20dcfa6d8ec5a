import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Open datastores for the transport's worker threads: a `Datastore` (one database connection)
/// serves one request at a time, so each request borrows one, with its `ReadCache`, and gives
/// it back. The pool also counts the server's own writes (`generation`): a request that wrote
/// moves it before it is answered, so every connection's cache knows to look at the database
/// again before the next answer.
///
/// Admission (issue 28): at most `capacity` connections are lent at once, and one client address
/// holds at most `share` of them, so that no address takes every connection of the database (on
/// PostgreSQL each is a server process, and the role's or the cluster's limit refuses the next
/// one to everybody). A request past either waits; when a connection comes back it goes to the
/// waiter whose address holds the fewest, first come first among equals, so an honest request
/// from elsewhere is never queued behind an attacker's. The server's own work (write batches)
/// has no address and is not held back.
///
/// Unchecked: its state is behind `mutex`, and a waiter waits on `turn`, a pthread condition
/// variable (Synchronization has none).
final class StorePool: @unchecked Sendable {
  /// Unchecked: one request at a time uses it, and it passes between threads only through the
  /// pool's lock.
  final class Pooled: @unchecked Sendable {
    let store: Datastore
    let cache: ReadCache
    /// `StorePool.generation` when this request borrowed the store: read before anything of
    /// the database is, so a write that commits after it moves the generation past it.
    fileprivate(set) var generation: UInt64 = 0
    /// The time limit and stop of the request using the store (armed by the service).
    let budget = StatementBudget()
    init(_ store: Datastore, _ kept: KeptAnswers, _ keys: SharedKeys) {
      self.store = store
      cache = ReadCache(kept, keys: keys)
      store.statementBudget = budget
    }
  }

  /// Stores lent out now, so that a stop reaches the statements they run.
  private var lent: [ObjectIdentifier: Pooled] = [:]
  /// Set by `stopAll`: every store lent from then on starts stopped.
  private var stopping = false

  private var generation: UInt64 = 0
  /// Connections lent since the pool was made (what a request that needs none must not move).
  private(set) var lendings: UInt64 = 0

  /// The answers every connection's `ReadCache` keeps, one set for the server.
  let kept = KeptAnswers()
  /// The board's keys on an engine without a mark, one copy for the server.
  let keys = SharedKeys()

  private let open: @Sendable () throws -> Datastore
  private var idle: [Pooled] = []
  private var mutex = pthread_mutex_t()

  /// Connections lent at once (0: no limit), and the most one address holds of them.
  let capacity: Int
  let share: Int
  private var lentCount = 0
  private var held: [String: Int] = [:]
  /// Requests waiting for a connection, by ticket (their order of arrival), with their address.
  private var waiting: [(ticket: UInt64, party: String)] = []
  private var tickets: UInt64 = 0
  private var turn = pthread_cond_t()
  /// Idle connections kept for the next requests; more are closed when given back. As many as
  /// may be lent at once: a connection closed and opened again costs PostgreSQL a new server
  /// process, whose first statements load its caches (issue 28: under the bombs, a honest
  /// request took such a new connection a dozen times in five seconds).
  private let keep: Int

  /// Checkpoints the log after this server's commits, so that none waits for one.
  let checkpointer: Checkpointer

  /// The share one address may hold of `capacity` connections: three quarters of them, the
  /// rest left to everyone else.
  static func share(of capacity: Int) -> Int { max(1, capacity * 3 / 4) }

  init(capacity: Int = 0, open: @escaping @Sendable () throws -> Datastore) {
    self.capacity = capacity
    share = StorePool.share(of: capacity)
    keep = max(16, capacity)
    let checkpointer = Checkpointer(open: open)
    self.checkpointer = checkpointer
    // Every connection of the pool reads through a map, and leaves checkpoints to the
    // checkpointer while its thread runs.
    self.open = {
      let store = try open()
      try store.serve(checkpointsApart: checkpointer.isRunning)
      return store
    }
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&turn, nil)
  }

  deinit {
    checkpointer.stop()
    pthread_cond_destroy(&turn)
    pthread_mutex_destroy(&mutex)
  }

  /// Runs `body` with a store. One whose request failed with a system error is not reused
  /// (its file may be gone, its server connection lost).
  /// `party` is the client address a request came from (nil for the server's own work): it
  /// waits its turn (`capacity`, `share`) for at most `wait` seconds, then is refused E429001.
  func with<T>(party: String? = nil, wait: Double = 30, _ body: (Pooled) throws -> T) throws -> T {
    try admit(party, wait: wait)
    defer { release(party) }
    return try lend(body)
  }

  private func lend<T>(_ body: (Pooled) throws -> T) throws -> T {
    pthread_mutex_lock(&mutex)
    let reused = idle.popLast()
    let generation = self.generation
    pthread_mutex_unlock(&mutex)
    let store = try reused ?? Pooled(open(), kept, keys)
    store.generation = generation
    pthread_mutex_lock(&mutex)
    lent[ObjectIdentifier(store)] = store
    lendings &+= 1
    if stopping { store.budget.cancel(.serverStopping) }
    pthread_mutex_unlock(&mutex)
    do {
      let result = try body(store)
      giveBack(store)
      return result
    } catch let error as DatastoreError
      where error.code == .systemError && !error.isStop
    {
      pthread_mutex_lock(&mutex)
      lent[ObjectIdentifier(store)] = nil
      pthread_mutex_unlock(&mutex)
      throw error
    } catch {
      giveBack(store)
      throw error
    }
  }

  /// Waits until `party` may borrow a connection: one is free, its address holds fewer than
  /// its share, and no waiter may go first (its address holding fewer, or as many and there
  /// first). The server's own work (nil) goes at once.
  private func admit(_ party: String?, wait: Double) throws {
    guard capacity > 0, let party, !party.isEmpty else {
      pthread_mutex_lock(&mutex)
      lentCount += 1
      pthread_mutex_unlock(&mutex)
      return
    }
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    tickets &+= 1
    let ticket = tickets
    waiting.append((ticket, party))
    var deadline = timespec()
    clock_gettime(CLOCK_REALTIME, &deadline)
    let nanoseconds = Int(max(0.05, wait) * 1e9) + deadline.tv_nsec
    deadline.tv_sec += nanoseconds / 1_000_000_000
    deadline.tv_nsec = nanoseconds % 1_000_000_000
    while !stopping && !isNext(ticket) {
      if pthread_cond_timedwait(&turn, &mutex, &deadline) == ETIMEDOUT && !isNext(ticket) {
        waiting.removeAll { $0.ticket == ticket }
        pthread_cond_broadcast(&turn)
        throw NCMBError(
          status: 429, code: "E429001",
          message:
            "Too many requests. (one address holds at most \(share) of the server's "
            + "\(capacity) database connections at once; try again in 1 s)")
      }
    }
    waiting.removeAll { $0.ticket == ticket }
    lentCount += 1
    held[party, default: 0] += 1
    // Another waiter may be next now (another address, with connections still free).
    pthread_cond_broadcast(&turn)
  }

  /// True when the waiter `ticket` may take a connection now (the mutex held).
  private func isNext(_ ticket: UInt64) -> Bool {
    guard lentCount < capacity else { return false }
    var best: (held: Int, ticket: UInt64)?
    for waiter in waiting {
      let holds = held[waiter.party, default: 0]
      guard holds < share else { continue }
      if let first = best, (first.held, first.ticket) <= (holds, waiter.ticket) { continue }
      best = (holds, waiter.ticket)
    }
    return best?.ticket == ticket
  }

  private func release(_ party: String?) {
    pthread_mutex_lock(&mutex)
    lentCount -= 1
    if capacity > 0, let party, !party.isEmpty {
      let holds = held[party, default: 1] - 1
      held[party] = holds > 0 ? holds : nil
    }
    pthread_cond_broadcast(&turn)
    pthread_mutex_unlock(&mutex)
  }

  /// Called after a write of this server committed, before it is answered.
  func noteWrite() {
    pthread_mutex_lock(&mutex)
    generation &+= 1
    pthread_mutex_unlock(&mutex)
    checkpointer.noteCommit()
  }

  /// Stops the statements running now and any run after (a second SIGTERM): each fails with
  /// `StatementStop.serverStopping`, its write undone.
  func stopAll() {
    pthread_mutex_lock(&mutex)
    stopping = true
    for store in lent.values { store.budget.cancel(.serverStopping) }
    pthread_cond_broadcast(&turn)
    pthread_mutex_unlock(&mutex)
  }

  private func giveBack(_ store: Pooled) {
    pthread_mutex_lock(&mutex)
    lent[ObjectIdentifier(store)] = nil
    if idle.count < keep { idle.append(store) }
    pthread_mutex_unlock(&mutex)
  }
}
