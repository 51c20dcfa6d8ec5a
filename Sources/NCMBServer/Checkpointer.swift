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
/// connection. On PostgreSQL a checkpoint is nothing. A script's lines run the same way
/// (`CommandLoop`): their checkpoints, and the `fdatasync`s that held its next line, on this thread.
public final class Checkpointer: Sendable {
  /// Least milliseconds between two checkpoints: the commits of that time are copied together.
  static let gap: UInt32 = 20

  private struct State {
    var pending = false
    var stopped = false
    var runs = 0
    /// The thread has closed its connection and ended.
    var ended = false
  }

  private let open: @Sendable () throws -> Datastore
  private let state = ConditionMutex(State())

  public init(open: @escaping @Sendable () throws -> Datastore) {
    self.open = open
    if let thread = startThread({ self.loop() }) {
      pthread_detach(thread)
    } else {
      // No thread: commits checkpoint as SQLite does by itself (`StorePool` asks this).
      state.withLock {
        $0.stopped = true
        $0.ended = true
      }
    }
  }

  /// False when the thread could not start: connections must then checkpoint at commit.
  public var isRunning: Bool { state.withLock { !$0.stopped } }

  /// Checkpoints run so far (tests).
  var checkpoints: Int { state.withLock { $0.runs } }

  /// Something was committed: a checkpoint follows.
  public func noteCommit() { state.change { $0.pending = true } }

  /// Ends the thread after the checkpoint it may be running (the last connection to close
  /// checkpoints whatever is left).
  func stop() { state.change { $0.stopped = true } }

  /// `stop`, then waits for the thread to close its connection: the caller's own connection is
  /// then the file's last, which copies what is left and removes the log when it closes.
  public func stopAndWait() {
    stop()
    _ = state.wait { $0.ended ? true : nil }
  }

  private func loop() {
    var store: Datastore?
    defer {
      store = nil
      state.change { $0.ended = true }
    }
    while true {
      let stop = state.wait { state -> Bool? in
        if state.stopped { return true }
        guard state.pending else { return nil }
        state.pending = false
        return false
      }
      if stop == true { return }
      do {
        if store == nil { store = try open() }
        try store?.checkpoint()
      } catch {
        // The file is gone or the connection broke: open again at the next commit.
        store = nil
      }
      state.withLock { $0.runs += 1 }
      usleep(Checkpointer.gap * 1000)
    }
  }
}
