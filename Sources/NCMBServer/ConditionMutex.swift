#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

/// A value behind a lock that threads may wait on until another thread changes it: what
/// `Synchronization.Mutex` is, plus a condition variable, which Synchronization does not have.
/// The server's waits use it: a request's turn for a database connection (`StorePool.Gate`), a
/// write for its batch (`WriteQueue`), the feed's waiters and watcher (`FeedWatcher`), the
/// checkpointer's thread (`Checkpointer`); and the read cache's answers (`KeptAnswers`), a lock
/// every request takes several times, where `Mutex` (a priority-inheritance futex on Linux, into
/// the kernel whenever two threads meet) held the demo app's mix 14 % back. Everything else
/// shared is in a `Mutex` or is a `Sendable` value.
///
/// The only type of the server whose sendability the compiler takes on trust: `state` is read and written only with `lock` held
/// (`withLock`, `wait`), as `Mutex` does. Unlike `Mutex`, what a holder takes out of the state
/// is not checked to be sendable: a pooled database connection leaves it for the one thread it
/// is lent to, and comes back through it.
final class ConditionMutex<State>: @unchecked Sendable {
  private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var state: State

  init(_ state: State) {
    self.state = state
    pthread_mutex_init(lock, nil)
    // Deadlines are `MonotonicClock`'s: a change of the wall clock neither ends nor stretches a wait.
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(changed, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(changed)
    pthread_mutex_destroy(lock)
    changed.deallocate()
    lock.deallocate()
  }

  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    return try body(&state)
  }

  /// `withLock` when the lock is free now, nil when another thread holds it.
  func withLockIfAvailable<Result>(_ body: (inout State) throws -> Result) rethrows -> Result? {
    guard pthread_mutex_trylock(lock) == 0 else { return nil }
    defer { pthread_mutex_unlock(lock) }
    return try body(&state)
  }

  /// `withLock`, then every waiter looks at the state again. They are woken once the lock is
  /// let go: woken while it is held, each would wake only to wait for it.
  func change<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(lock)
    defer {
      pthread_mutex_unlock(lock)
      pthread_cond_broadcast(changed)
    }
    return try body(&state)
  }

  /// Waits until `ready` makes something of the state (looked at with the lock held: at once,
  /// then after each `change`), or until `deadline` (`MonotonicClock.now()` seconds) has passed:
  /// nil. `ready` runs once more after the deadline, so a turn that came with it is not lost.
  func wait<Result>(until deadline: Double? = nil, _ ready: (inout State) throws -> Result?)
    rethrows -> Result?
  {
    pthread_mutex_lock(lock)
    defer { pthread_mutex_unlock(lock) }
    while true {
      if let result = try ready(&state) { return result }
      guard let deadline else {
        pthread_cond_wait(changed, lock)
        continue
      }
      if MonotonicClock.now() >= deadline { return nil }
      var time = timespec()
      time.tv_sec = Int(deadline)
      time.tv_nsec = Int((deadline - Double(time.tv_sec)) * 1e9)
      pthread_cond_timedwait(changed, lock, &time)
    }
  }
}

/// A value one thread hands to another that waits for it, once. The waiter sleeps on a lock and
/// a condition of its own, so the hand wakes that thread alone: where many threads wait for
/// different things (`WriteQueue`'s requests), no change wakes them all to look.
final class Handoff<Value: Sendable>: Sendable {
  private let slot = ConditionMutex<Value?>(nil)

  func hand(_ value: Value) { slot.change { $0 = value } }

  /// Waits until the value is handed, and takes it.
  func take() -> Value {
    while true {
      if let value = slot.wait({ $0 }) { return value }
    }
  }
}
