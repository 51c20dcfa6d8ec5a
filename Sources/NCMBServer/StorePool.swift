import Datastore
import Synchronization

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
final class StorePool: Sendable {
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
    init(_ store: Datastore, _ kept: KeptAnswers) {
      self.store = store
      cache = ReadCache(kept)
      store.statementBudget = budget
    }
  }

  private struct Lending {
    /// Stores lent out now, so that a stop reaches the statements they run.
    var lent: [ObjectIdentifier: Pooled] = [:]
    /// Set by `stopAll`: every store lent from then on starts stopped.
    var stopping = false
    var generation: UInt64 = 0
    var idle: [Pooled] = []
  }
  private let lending = Mutex(Lending())

  /// The answers every connection's `ReadCache` keeps, one set for the server.
  let kept = KeptAnswers()

  private let open: @Sendable () throws -> Datastore
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
  }

  deinit {
    checkpointer.stop()
  }

  /// Runs `body` with a store. One whose request failed with a system error is not reused
  /// (its file may be gone, its server connection lost).
  func with<T>(_ body: (Pooled) throws -> T) throws -> T {
    let (reused, generation) = lending.withLock { ($0.idle.popLast(), $0.generation) }
    let store = try reused ?? Pooled(open(), kept)
    store.generation = generation
    lending.withLock {
      $0.lent[ObjectIdentifier(store)] = store
      if $0.stopping { store.budget.cancel(.serverStopping) }
    }
    do {
      let result = try body(store)
      giveBack(store)
      return result
    } catch let error as DatastoreError
      where error.code == .systemError && !error.isStop
    {
      lending.withLock { $0.lent[ObjectIdentifier(store)] = nil }
      throw error
    } catch {
      giveBack(store)
      throw error
    }
  }

  /// Called after a write of this server committed, before it is answered.
  func noteWrite() {
    lending.withLock { $0.generation &+= 1 }
    checkpointer.noteCommit()
  }

  /// Stops the statements running now and any run after (a second SIGTERM): each fails with
  /// `StatementStop.serverStopping`, its write undone.
  func stopAll() {
    lending.withLock {
      $0.stopping = true
      for store in $0.lent.values { store.budget.cancel(.serverStopping) }
    }
  }

  private func giveBack(_ store: Pooled) {
    lending.withLock {
      $0.lent[ObjectIdentifier(store)] = nil
      if $0.idle.count < keep { $0.idle.append(store) }
    }
  }
}
