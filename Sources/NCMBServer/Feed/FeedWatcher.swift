import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Thrown by a feed controller whose read found nothing new and may wait: the service lets go
/// of the database connection and the read slot, waits on the server's `FeedWatcher`, then runs
/// the request again (its whole pipeline: signature, session, ACL). `answer` is what the request
/// gets if nothing comes before `seconds` pass or the server stops.
struct FeedWait: Error {
  var seconds: Double
  var answer: HTTPResponse
  /// The caller's app user (nil without a session): waits are counted per user and per address.
  var user: String?
}

/// Thrown by `forum/feed` once its request is admitted: the service answers with a stream of
/// server-sent events from `since` (`FeedEvents`).
struct FeedStreamStart: Error {
  var since: Int64
  var user: String?
}

/// One thread per server that watches the engine's own wake-up (SQLite `PRAGMA data_version`
/// on a connection of its own, PostgreSQL `LISTEN forum_changes`) while anyone waits, and moves
/// `generation` when something was committed: every waiting request is woken by it, none polls
/// the database itself. This server's own commits kick it at once (`noteCommit`), so a post
/// reaches a waiting client without waiting for the next look.
final class FeedWatcher: Sendable {
  enum Outcome { case woken, timedOut, stopping, clientGone }

  /// A waiting request's place in the counts, given back by `leave`.
  struct Slot {
    fileprivate let keys: [String]
  }

  /// How long the thread keeps its connection once nobody waits.
  static let idleSeconds = 30.0

  private struct State {
    var generation: UInt64 = 0
    var waiting: [String: Int] = [:]
    var waiters = 0
    var stopped = false
    var started = false
  }

  private let open: @Sendable () throws -> Datastore
  private let perUser: Int
  private let perAddress: Int
  private let state = ConditionMutex(State())
  /// Written to kick the thread (a commit of this server, a stop): it polls it with the engine's
  /// descriptor, or alone on SQLite between two looks. -1 when no pipe could be made.
  private let kickRead: Int32
  private let kickWrite: Int32

  init(
    perUser: Int, perAddress: Int, open: @escaping @Sendable () throws -> Datastore
  ) {
    self.open = open
    self.perUser = perUser
    self.perAddress = perAddress
    var kickPipe: [Int32] = [-1, -1]
    if pipe(&kickPipe) == 0 {
      for fd in kickPipe {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      }
    } else {
      kickPipe = [-1, -1]
    }
    (kickRead, kickWrite) = (kickPipe[0], kickPipe[1])
  }

  deinit {
    stop()
    for fd in [kickRead, kickWrite] where fd >= 0 { close(fd) }
  }

  /// Where the feed's wake-ups are now: read before the feed is, so a commit after the read
  /// moves it past this.
  var current: UInt64 { state.withLock { $0.generation } }

  /// Counts a waiting request in (its app user's or, without a session, its address's, and its
  /// address's), or E429001 when one of them already waits `perUser`/`perAddress` times.
  func enter(user: String?, address: String) throws -> Slot {
    // Without a session, the address stands for the user.
    let (key, words) =
      user.map { ("user\u{0}" + $0, "one app user waits on the feed at most") }
      ?? ("nobody\u{0}" + address, "one address without a session waits on the feed at most")
    let asks: [(String, Int, String)] = [
      (key, perUser, words),
      ("address\u{0}" + address, perAddress, "one address waits on the feed at most"),
    ]
    let start = try state.change { state -> Bool in
      if state.stopped { throw NCMBError.feedStopping }
      for (key, limit, words) in asks where limit > 0 && state.waiting[key, default: 0] >= limit {
        throw NCMBError(
          status: 429, code: "E429001",
          message: "Too many requests. (\(words) \(limit) times at once; end one first)")
      }
      for (key, _, _) in asks { state.waiting[key, default: 0] += 1 }
      state.waiters += 1
      defer { state.started = true }
      return !state.started
    }
    if start { startThread() }
    return Slot(keys: asks.map(\.0))
  }

  func leave(_ slot: Slot) {
    state.withLock { state in
      for key in slot.keys {
        let count = state.waiting[key, default: 1] - 1
        state.waiting[key] = count > 0 ? count : nil
      }
      state.waiters -= 1
    }
  }

  /// Waits until a wake-up after `seen`, `deadline` (`MonotonicClock`), a stop, or the client's
  /// hang-up (looked at four times a second).
  func wait(after seen: UInt64, until deadline: Double, clientGone: (@Sendable () -> Bool)?)
    -> Outcome
  {
    // The first look waits for nothing: a stop, a wake-up, the deadline, then the client.
    var slice = 0.0
    while true {
      let outcome = state.wait(until: slice) { state -> Outcome? in
        if state.stopped { return .stopping }
        if state.generation != seen { return .woken }
        return nil
      }
      if let outcome { return outcome }
      if MonotonicClock.now() >= deadline { return .timedOut }
      if let clientGone, clientGone() { return .clientGone }
      slice = min(deadline, MonotonicClock.now() + 0.25)
    }
  }

  /// A commit of this server: the thread looks at once.
  func noteCommit() { kick() }

  /// Every wait ends now (`.stopping`), and so does the thread; no new one begins.
  func stop() {
    state.change { $0.stopped = true }
    kick()
  }

  var isStopping: Bool { state.withLock { $0.stopped } }

  private func kick() {
    guard kickWrite >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(kickWrite, &byte, 1)
  }

  private func startThread() {
    var started = pthread_t()
    let context = Unmanaged.passRetained(self).toOpaque()
    if pthread_create(
      &started, nil,
      { context in
        let watcher = Unmanaged<FeedWatcher>.fromOpaque(context!).takeRetainedValue()
        watcher.run()
        return nil
      }, context) == 0
    {
      // Never joined: the thread holds the watcher until it ends, after a stop.
      pthread_detach(started)
    } else {
      Unmanaged<FeedWatcher>.fromOpaque(context).release()
      state.withLock { $0.started = false }
    }
  }

  private func bump() { state.change { $0.generation &+= 1 } }

  /// The thread: looks at the engine's wake-up while anyone waits, sleeps while nobody does.
  private func run() {
    var client: DatastoreClient?
    var descriptor: Int32?
    var interval = 0.25
    while true {
      // Nobody waits: the connection is kept a while (a long-poll loop comes back at once),
      // then let go, so that no LISTEN goes unread for long (PostgreSQL would keep its
      // notifications for it) and no file is looked at for nobody.
      let busy = { (state: inout State) -> Bool? in
        state.waiters > 0 || state.stopped ? state.stopped : nil
      }
      var stop = state.wait(until: MonotonicClock.now() + FeedWatcher.idleSeconds, busy)
      if stop == nil {
        client = nil
        descriptor = nil
        stop = state.wait(busy)
      }
      if stop == true { return }
      do {
        if client == nil {
          let opened = try open().client(sessionToken: nil)
          descriptor = try opened.wakeFileDescriptor()
          interval = opened.wakePollInterval
          client = opened
          // Whatever came before this look: each waiter reads again once.
          _ = try opened.hasPendingWakeup()
          bump()
        }
        var fds = [pollfd(fd: kickRead, events: Int16(POLLIN), revents: 0)]
        if let descriptor { fds.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), Int32(interval * 1000))
        var kicked = false
        if fds[0].revents != 0 {
          var drain = [UInt8](repeating: 0, count: 64)
          while read(kickRead, &drain, drain.count) > 0 { kicked = true }
        }
        let woken = try client!.hasPendingWakeup()
        if woken || kicked { bump() }
      } catch {
        // The database went away: the waiters run again (and are answered its error), and the
        // thread opens it again after a pause.
        client = nil
        descriptor = nil
        bump()
        usleep(500_000)
      }
    }
  }
}

extension NCMBError {
  /// A wait asked for while the server stops.
  static let feedStopping = NCMBError(
    status: 503, code: "E503001", message: "Service unavailable.")
}
