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
final class StorePool: @unchecked Sendable {
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

  /// Stores lent out now, so that a stop reaches the statements they run.
  private var lent: [ObjectIdentifier: Pooled] = [:]
  /// Set by `stopAll`: every store lent from then on starts stopped.
  private var stopping = false

  private var generation: UInt64 = 0

  /// The answers every connection's `ReadCache` keeps, one set for the server.
  let kept = KeptAnswers()
  /// The board's keys on an engine without a mark, one copy for the server.
  let keys = SharedKeys()

  private let open: @Sendable () throws -> Datastore
  private var idle: [Pooled] = []
  private var mutex = pthread_mutex_t()
  /// Idle connections kept for the next requests; more are closed when given back.
  private let keep = 16

  /// Checkpoints the log after this server's commits, so that none waits for one.
  let checkpointer: Checkpointer

  init(open: @escaping @Sendable () throws -> Datastore) {
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
  }

  deinit {
    checkpointer.stop()
    pthread_mutex_destroy(&mutex)
  }

  /// Runs `body` with a store. One whose request failed with a system error is not reused
  /// (its file may be gone, its server connection lost).
  func with<T>(_ body: (Pooled) throws -> T) throws -> T {
    pthread_mutex_lock(&mutex)
    let reused = idle.popLast()
    let generation = self.generation
    pthread_mutex_unlock(&mutex)
    let store = try reused ?? Pooled(open(), kept, keys)
    store.generation = generation
    pthread_mutex_lock(&mutex)
    lent[ObjectIdentifier(store)] = store
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
    pthread_mutex_unlock(&mutex)
  }

  private func giveBack(_ store: Pooled) {
    pthread_mutex_lock(&mutex)
    lent[ObjectIdentifier(store)] = nil
    if idle.count < keep { idle.append(store) }
    pthread_mutex_unlock(&mutex)
  }
}
