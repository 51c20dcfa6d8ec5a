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
final class FeedWatcher: @unchecked Sendable {
  enum Outcome { case woken, timedOut, stopping, clientGone }

  /// A waiting request's place in the counts, given back by `leave`.
  struct Slot {
    fileprivate let keys: [String]
  }

  private let open: @Sendable () throws -> Datastore
  private let perUser: Int
  private let perAddress: Int
  private var mutex = pthread_mutex_t()
  private var changed = pthread_cond_t()
  private var generation: UInt64 = 0
  private var waiting: [String: Int] = [:]
  private var waiters = 0
  private var stopped = false
  private var thread: pthread_t?
  /// Written to kick the thread (a commit of this server, a stop): it polls it with the engine's
  /// descriptor, or alone on SQLite between two looks.
  private var kickPipe: [Int32] = [-1, -1]

  init(
    perUser: Int, perAddress: Int, open: @escaping @Sendable () throws -> Datastore
  ) {
    self.open = open
    self.perUser = perUser
    self.perAddress = perAddress
    pthread_mutex_init(&mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(&changed, &attributes)
    pthread_condattr_destroy(&attributes)
    if pipe(&kickPipe) == 0 {
      for fd in kickPipe {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      }
    } else {
      kickPipe = [-1, -1]
    }
  }

  deinit {
    stop()
    for fd in kickPipe where fd >= 0 { close(fd) }
    pthread_cond_destroy(&changed)
    pthread_mutex_destroy(&mutex)
  }

  /// Where the feed's wake-ups are now: read before the feed is, so a commit after the read
  /// moves it past this.
  var current: UInt64 {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return generation
  }

  /// Counts a waiting request in (its app user's or, without a session, its address's, and its
  /// address's), or E429001 when one of them already waits `perUser`/`perAddress` times.
  func enter(user: String?, address: String) throws -> Slot {
    var asks: [(String, Int, String)] = []
    if let user {
      asks.append(("user\u{0}" + user, perUser, "one app user waits on the feed at most"))
    }
    asks.append(
      (
        "address\u{0}" + address, user == nil ? perUser : perAddress,
        "one address waits on the feed at most"
      ))
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    if stopped { throw NCMBError.feedStopping }
    for (key, limit, words) in asks where limit > 0 && waiting[key, default: 0] >= limit {
      throw NCMBError(
        status: 429, code: "E429001",
        message: "Too many requests. (\(words) \(limit) times at once; end one first)")
    }
    for (key, _, _) in asks { waiting[key, default: 0] += 1 }
    waiters += 1
    startIfNeeded()
    pthread_cond_broadcast(&changed)
    return Slot(keys: asks.map(\.0))
  }

  func leave(_ slot: Slot) {
    pthread_mutex_lock(&mutex)
    for key in slot.keys {
      let count = waiting[key, default: 1] - 1
      waiting[key] = count > 0 ? count : nil
    }
    waiters -= 1
    pthread_mutex_unlock(&mutex)
  }

  /// Waits until a wake-up after `seen`, `deadline` (`MonotonicClock`), a stop, or the client's
  /// hang-up (looked at four times a second).
  func wait(after seen: UInt64, until deadline: Double, clientGone: (@Sendable () -> Bool)?)
    -> Outcome
  {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    while true {
      if stopped { return .stopping }
      if generation != seen { return .woken }
      let now = MonotonicClock.now()
      if now >= deadline { return .timedOut }
      if let clientGone, clientGone() { return .clientGone }
      let until = min(deadline, now + 0.25)
      var clock = timespec()
      clock.tv_sec = Int(until)
      clock.tv_nsec = Int((until - Double(clock.tv_sec)) * 1e9)
      pthread_cond_timedwait(&changed, &mutex, &clock)
    }
  }

  /// A commit of this server: the thread looks at once.
  func noteCommit() { kick() }

  /// Every wait ends now (`.stopping`), and so does the thread; no new one begins.
  func stop() {
    pthread_mutex_lock(&mutex)
    stopped = true
    pthread_cond_broadcast(&changed)
    pthread_mutex_unlock(&mutex)
    kick()
  }

  var isStopping: Bool {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return stopped
  }

  private func kick() {
    guard kickPipe[1] >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(kickPipe[1], &byte, 1)
  }

  /// Called with the mutex held.
  private func startIfNeeded() {
    guard thread == nil else { return }
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
      thread = started
    } else {
      Unmanaged<FeedWatcher>.fromOpaque(context).release()
    }
  }

  private func bump() {
    pthread_mutex_lock(&mutex)
    generation &+= 1
    pthread_cond_broadcast(&changed)
    pthread_mutex_unlock(&mutex)
  }

  /// The thread: looks at the engine's wake-up while anyone waits, sleeps while nobody does.
  private func run() {
    var client: DatastoreClient?
    var descriptor: Int32?
    var interval = 0.25
    while true {
      pthread_mutex_lock(&mutex)
      while waiters == 0 && !stopped { pthread_cond_wait(&changed, &mutex) }
      let stop = stopped
      pthread_mutex_unlock(&mutex)
      if stop { return }
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
        var fds = [pollfd(fd: kickPipe[0], events: Int16(POLLIN), revents: 0)]
        if let descriptor { fds.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
        _ = poll(&fds, nfds_t(fds.count), Int32(interval * 1000))
        var kicked = false
        if fds[0].revents != 0 {
          var drain = [UInt8](repeating: 0, count: 64)
          while read(kickPipe[0], &drain, drain.count) > 0 { kicked = true }
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
