import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The change feed over the network: a long-poll (`forum/changes?wait=`) or an event stream
/// (`forum/feed`) waits on the server's one `FeedWatcher`, holding neither a database connection
/// nor a read slot while it waits; only its own connection's thread, which serves nobody else.
/// Each read after a wake-up passes the pipeline again (signature, session, the engine's ACL).
extension NCMBService {
  public func respond(to request: HTTPRequest) -> HTTPResponse {
    var slot: FeedWatcher.Slot?
    defer { if let slot { feed.leave(slot) } }
    var deadline = 0.0
    while true {
      // Before the read: a commit after it moves the watcher past this.
      let seen = feed.current
      do {
        return try respondOnce(to: request, waiting: slot != nil)
      } catch let wait as FeedWait {
        if slot == nil {
          do {
            slot = try feed.enter(user: wait.user, address: request.clientAddress)
          } catch {
            return failure(error)
          }
          deadline = MonotonicClock.now() + wait.seconds
        }
        guard feed.wait(after: seen, until: deadline, clientGone: request.clientGone) == .woken
        else { return wait.answer }
      } catch let start as FeedStreamStart {
        return stream(request, start)
      } catch {
        return failure(error)
      }
    }
  }

  /// Waits and streams end now, answered (`HTTPServer.stop`).
  public func serverStopping() { feed.stop() }

  /// A commit of this server: every connection's cache looks again, and the feed's waiters
  /// are woken without waiting for the watcher's next look.
  func noteCommit() {
    pool.noteWrite()
    feed.noteCommit()
  }

  private func stream(_ request: HTTPRequest, _ start: FeedStreamStart) -> HTTPResponse {
    let slot: FeedWatcher.Slot
    do {
      slot = try feed.enter(user: start.user, address: request.clientAddress)
    } catch {
      return failure(error)
    }
    var response = HTTPResponse(
      status: 200,
      headers: [
        (name: "content-type", value: "text/event-stream; charset=utf-8"),
        (name: "cache-control", value: "no-store"),
      ])
    response.stream = FeedEvents(
      service: self, request: request, since: start.since, user: start.user, slot: slot)
    return response
  }

  /// One read of the feed for a stream: the session looked up again (a session ended since is
  /// the stream's end), the engine's ACL, the server's time limit.
  fileprivate func readFeed(_ request: HTTPRequest, since: Int64) throws -> ChangeBatch {
    try pool.with { pooled in
      pooled.budget.begin(seconds: limits.timeLimitSeconds, clientGone: request.clientGone)
      defer { pooled.budget.end() }
      let client = try session(request, pooled.store, nil)
      return try client.changes(since: since, limit: FeedEvents.batchLimit)
    }
  }
}

/// The events of one `forum/feed` stream, made as the client takes them.
final class FeedEvents: HTTPBodyStream, @unchecked Sendable {
  /// A comment this often when nothing happens: proxies keep the connection, and a client gone
  /// is found by the write.
  static let heartbeatSeconds = 15.0
  static let batchLimit = 500

  private let service: NCMBService
  private let request: HTTPRequest
  private let reader: RateLimits.Reader?
  private var cursor: Int64
  private var started = false
  private var ended = false
  private var slot: FeedWatcher.Slot?
  private var mutex = pthread_mutex_t()

  init(
    service: NCMBService, request: HTTPRequest, since: Int64, user: String?,
    slot: FeedWatcher.Slot
  ) {
    self.service = service
    self.request = request
    self.cursor = since
    self.slot = slot
    reader = service.rateLimits.reader(request, user: user)
    pthread_mutex_init(&mutex, nil)
  }

  deinit {
    finished()
    pthread_mutex_destroy(&mutex)
  }

  func finished() {
    pthread_mutex_lock(&mutex)
    let slot = self.slot
    self.slot = nil
    pthread_mutex_unlock(&mutex)
    if let slot { service.feed.leave(slot) }
  }

  func next() -> [UInt8]? {
    guard !ended else { return nil }
    if !started {
      started = true
      // Sent at once, so the client knows the stream is open before anything happens.
      return Array(": forum change feed\nretry: 2000\n\n".utf8)
    }
    let heartbeat = MonotonicClock.now() + FeedEvents.heartbeatSeconds
    while true {
      let seen = service.feed.current
      if service.feed.isStopping {
        ended = true
        return nil
      }
      let batch: ChangeBatch
      do {
        if let refusal = service.rateLimits.readRefusal(reader) { throw refusal }
        batch = try service.readFeed(request, since: cursor)
      } catch {
        // Said once as an event, then the stream ends (the client may come back).
        ended = true
        return Array("event: error\ndata: ".utf8) + service.failure(error).body
          + Array("\n\n".utf8)
      }
      var out: [UInt8] = []
      if batch.missed {
        out += Array("event: missed\ndata: {\"missed\":true,\"next\":\(batch.next)}\n\n".utf8)
      }
      for change in batch.changes {
        out += Array("id: \(change.sequence)\ndata: ".utf8)
        out += ChangeWire.json(change).jsonBytes()
        out += Array("\n\n".utf8)
      }
      cursor = batch.next
      if !out.isEmpty {
        service.rateLimits.charge(reader, bytes: out.count)
        return out
      }
      if batch.hasMore { continue }
      switch service.feed.wait(after: seen, until: heartbeat, clientGone: request.clientGone) {
      case .woken: continue
      case .timedOut: return Array(": heartbeat\n\n".utf8)
      case .stopping, .clientGone:
        ended = true
        return nil
      }
    }
  }
}
