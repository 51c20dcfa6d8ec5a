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
/// Its state is one `ConditionMutex`; a waiter waits on its own `Gate`, opened by whoever grants
/// it its turn.
final class StorePool: Sendable {
  /// A connection as one request uses it: lent to one thread at a time, through the pool's lock.
  final class Pooled {
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

  private struct State {
    /// The budgets of the stores lent out now, so that a stop reaches the statements they run.
    var lent: [ObjectIdentifier: StatementBudget] = [:]
    /// Set by `stopAll`: every store lent from then on starts stopped.
    var stopping = false
    var generation: UInt64 = 0
    var lendings: UInt64 = 0
    var idle: [Pooled] = []
    /// The write batches' own connection while it is not lent (`withWriter`).
    var writer: Pooled?
    var lentCount = 0
    var held: [String: Int] = [:]
    /// Requests waiting for a connection, by ticket (their order of arrival), with their address
    /// and the gate the one that gives them a turn opens.
    var waiting: [(ticket: UInt64, party: String, gate: Gate)] = []
    var tickets: UInt64 = 0

    /// Hands free connections to the waiters whose turn it is (each: its address holds fewer
    /// than its share, and no waiter holds fewer or as many and came first), counted as theirs
    /// at once; returns their gates, to be opened once the lock is let go. Everyone waiting
    /// once the server stops.
    mutating func grantTurns(capacity: Int, share: Int) -> [Gate] {
      var opened: [Gate] = []
      while !waiting.isEmpty, stopping || lentCount < capacity {
        var best: (index: Int, held: Int)?
        for (index, waiter) in waiting.enumerated() {
          let holds = held[waiter.party, default: 0]
          guard stopping || holds < share else { continue }
          if let first = best, first.held <= holds { continue }
          best = (index, holds)
          if holds == 0 { break }  // none can come before the first with nothing held
        }
        guard let best else { break }
        let waiter = waiting.remove(at: best.index)
        lentCount += 1
        held[waiter.party, default: 0] += 1
        waiter.gate.granted = true
        opened.append(waiter.gate)
      }
      return opened
    }
  }

  /// One waiter's turn: set under the pool's lock by whoever grants it, then opened.
  final class Gate: Sendable {
    private let state = ConditionMutex((granted: false, open: false))
    /// Read and written under the pool's lock.
    var granted: Bool {
      get { state.withLock { $0.granted } }
      set { state.withLock { $0.granted = newValue } }
    }
    func open() { state.change { $0.open = true } }
    /// Waits until opened or `deadline` (`MonotonicClock`) passes.
    func wait(until deadline: Double) { _ = state.wait(until: deadline) { $0.open ? true : nil } }
  }

  private let state = ConditionMutex(State())

  /// Connections lent since the pool was made (what a request that needs none must not move).
  var lendings: UInt64 { state.withLock { $0.lendings } }
  /// Requests waiting for their turn now.
  var waitingCount: Int { state.withLock { $0.waiting.count } }

  /// The answers every connection's `ReadCache` keeps, one set for the server.
  let kept = KeptAnswers()
  /// The board's keys on an engine without a mark, one copy for the server.
  let keys = SharedKeys()

  private let open: @Sendable () throws -> Datastore

  /// Connections lent at once (0: no limit), and the most one address holds of them.
  let capacity: Int
  let share: Int
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

  init(
    capacity: Int = 0, open: @escaping @Sendable () throws -> Datastore
  ) {
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
  }

  deinit { checkpointer.stop() }

  /// Runs `body` with a store. One whose request failed with a system error is not reused
  /// (its file may be gone, its server connection lost).
  /// `party` is the client address a request came from (nil for the server's own work): it
  /// waits its turn (`capacity`, `share`) for at most `wait` seconds, then is refused E429001.
  func with<T>(party: String? = nil, wait: Double = 30, _ body: (Pooled) throws -> T) throws -> T {
    try admit(party, wait: wait)
    defer { release(party) }
    return try lend(body)
  }

  /// `with` for the write queue's batches and the upkeep between them, on a connection kept for
  /// them: SQLite empties a connection's page cache whenever another connection has committed
  /// since its last transaction, so batches on whichever connection a read gave back last read
  /// the indexes' upper pages from the file again at every batch (`pread`: 6 % of `forum
  /// serve`'s time under POSTs). The queue runs one batch at a time; a second caller at once
  /// takes another connection. On PostgreSQL one backend doing every write costs what the pool's
  /// did (BENCHMARKS N34: the five times more of N32 was the bench counting only the backends
  /// there before the run).
  func withWriter<T>(_ body: (Pooled) throws -> T) throws -> T {
    try admit(nil, wait: 0)
    defer { release(nil) }
    return try lend(writer: true, body)
  }

  private func lend<T>(writer: Bool = false, _ body: (Pooled) throws -> T) throws -> T {
    let (reused, generation) = state.withLock { state in
      let kept = writer ? state.writer.take() : nil
      return (kept ?? state.idle.popLast(), state.generation)
    }
    let store = try reused ?? Pooled(open(), kept, keys)
    store.generation = generation
    let budget = store.budget
    state.withLock {
      $0.lent[ObjectIdentifier(store)] = budget
      $0.lendings &+= 1
      if $0.stopping { budget.cancel(.serverStopping) }
    }
    do {
      let result = try body(store)
      giveBack(store, writer: writer)
      return result
    } catch let error as DatastoreError
      where error.code == .systemError && !error.isStop
    {
      state.withLock { _ = $0.lent.removeValue(forKey: ObjectIdentifier(store)) }
      throw error
    } catch {
      giveBack(store, writer: writer)
      throw error
    }
  }

  /// Waits until `party` may borrow a connection: one is free, its address holds fewer than
  /// its share, and no waiter may go first (its address holding fewer, or as many and there
  /// first). The server's own work (nil) goes at once. The turn is handed over: whoever gives a
  /// connection back counts it as the next waiter's and wakes that one alone (when every waiter
  /// woke at each give-back to look for itself, 64 clients spent most of the server's time in
  /// the scheduler and hashing addresses: the demo's reads at a third of their pace at 8).
  private func admit(_ party: String?, wait: Double) throws {
    guard capacity > 0, let party, !party.isEmpty else {
      state.withLock { $0.lentCount += 1 }
      return
    }
    let (capacity, share) = (self.capacity, self.share)
    let free = state.withLock { state -> Bool in
      guard state.waiting.isEmpty, state.lentCount < capacity,
        state.held[party, default: 0] < share
      else { return false }
      state.lentCount += 1
      state.held[party, default: 0] += 1
      return true
    }
    if free { return }
    let gate = Gate()
    var ticket: UInt64 = 0
    let opened = grantingTurns { state in
      state.tickets &+= 1
      ticket = state.tickets
      state.waiting.append((ticket, party, gate))
    }
    if opened.contains(where: { $0 === gate }) { return }
    gate.wait(until: MonotonicClock.now() + max(0.05, wait))
    let admitted = state.withLock { state -> Bool in
      if gate.granted { return true }
      state.waiting.removeAll { $0.ticket == ticket }
      return false
    }
    guard !admitted else { return }
    throw NCMBError(
      status: 429, code: "E429001",
      message:
        "Too many requests. (one address holds at most \(share) of the server's "
        + "\(capacity) database connections at once; try again in 1 s)")
  }

  private func release(_ party: String?) {
    let counted = capacity > 0
    grantingTurns { state in
      state.lentCount -= 1
      if counted, let party, !party.isEmpty {
        let holds = state.held[party, default: 1] - 1
        state.held[party] = holds > 0 ? holds : nil
      }
    }
  }

  /// Changes the state, hands out the turns the change made free (`State.grantTurns`) and opens
  /// their gates once the lock is let go; returns them.
  @discardableResult
  private func grantingTurns(_ change: (inout State) -> Void) -> [Gate] {
    let (capacity, share) = (self.capacity, self.share)
    let opened = state.withLock { state -> [Gate] in
      change(&state)
      return state.grantTurns(capacity: capacity, share: share)
    }
    for gate in opened { gate.open() }
    return opened
  }

  /// Called after a write of this server committed, before it is answered.
  func noteWrite() {
    state.withLock { $0.generation &+= 1 }
    checkpointer.noteCommit()
  }

  /// Stops the statements running now and any run after (a second SIGTERM): each fails with
  /// `StatementStop.serverStopping`, its write undone.
  func stopAll() {
    grantingTurns { state in
      state.stopping = true
      for budget in state.lent.values { budget.cancel(.serverStopping) }
    }
  }

  private func giveBack(_ store: Pooled, writer: Bool) {
    let keep = self.keep
    state.withLock {
      $0.lent[ObjectIdentifier(store)] = nil
      if writer, $0.writer == nil {
        $0.writer = store
      } else if $0.idle.count < keep {
        $0.idle.append(store)
      }
    }
  }
}
