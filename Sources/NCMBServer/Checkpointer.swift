import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Copies the server's commits from SQLite's log into the database on a thread of its own, so
/// that no request waits for it. A commit that checkpoints by itself (SQLite's default, once the
/// log passes 1,000 pages) writes pages into the database file and calls `fdatasync` twice,
/// 5–40 ms on this project's disks, all while the write queue is held: every writer waited and
/// the mix's p99 was 90–540 ms. The server's connections leave checkpoints to this
/// (`Datastore.serve(checkpointsApart:)`), which runs a passive one (it waits for nobody and
/// nobody waits for it) after commits, at most every `Checkpointer.gap` milliseconds, on its own
/// connection. On PostgreSQL a checkpoint is nothing.
/// Unchecked: its state is behind a pthread mutex with a condition variable for its thread,
/// which Synchronization does not have.
final class Checkpointer: @unchecked Sendable {
  /// Least milliseconds between two checkpoints: the commits of that time are copied together.
  static let gap: UInt32 = 20

  private let open: () throws -> Datastore
  private var mutex = pthread_mutex_t()
  private var wake = pthread_cond_t()
  private var pending = false
  private var stopped = false
  private var runs = 0

  init(open: @escaping () throws -> Datastore) {
    self.open = open
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&wake, nil)
    var thread = pthread_t()
    let me = Unmanaged.passRetained(self).toOpaque()
    let started = pthread_create(
      &thread, nil,
      { context in
        let checkpointer = Unmanaged<Checkpointer>.fromOpaque(context!).takeRetainedValue()
        checkpointer.loop()
        return nil
      }, me)
    if started == 0 {
      pthread_detach(thread)
    } else {
      // No thread: commits checkpoint as SQLite does by itself (`StorePool` asks this).
      Unmanaged<Checkpointer>.fromOpaque(me).release()
      stopped = true
    }
  }

  deinit {
    pthread_cond_destroy(&wake)
    pthread_mutex_destroy(&mutex)
  }

  /// False when the thread could not start: connections must then checkpoint at commit.
  var isRunning: Bool {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return !stopped
  }

  /// Checkpoints run so far (tests).
  var checkpoints: Int {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return runs
  }

  /// Something was committed: a checkpoint follows.
  func noteCommit() {
    pthread_mutex_lock(&mutex)
    pending = true
    pthread_cond_signal(&wake)
    pthread_mutex_unlock(&mutex)
  }

  /// Ends the thread after the checkpoint it may be running (the last connection to close
  /// checkpoints whatever is left).
  func stop() {
    pthread_mutex_lock(&mutex)
    stopped = true
    pthread_cond_signal(&wake)
    pthread_mutex_unlock(&mutex)
  }

  private func loop() {
    var store: Datastore?
    while true {
      pthread_mutex_lock(&mutex)
      while !pending && !stopped { pthread_cond_wait(&wake, &mutex) }
      if stopped {
        pthread_mutex_unlock(&mutex)
        return
      }
      pending = false
      pthread_mutex_unlock(&mutex)
      do {
        if store == nil { store = try open() }
        try store?.checkpoint()
      } catch {
        // The file is gone or the connection broke: open again at the next commit.
        store = nil
      }
      pthread_mutex_lock(&mutex)
      runs += 1
      pthread_mutex_unlock(&mutex)
      usleep(Checkpointer.gap * 1000)
    }
  }
}
