import Datastore
import Synchronization

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
  /// The pipeline's answer, a feed request's after its wait (`respond(to:)` adds the pause).
  func respondWaitingOnTheFeed(_ request: HTTPRequest) -> HTTPResponse {
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
          // The server is stopping: answered now, with what it has.
          if feed.isStopping { return wait.answer }
          do {
            slot = try feed.enter(user: wait.user, address: request.clientAddress)
          } catch {
            return NCMBService.failure(error)
          }
          deadline = MonotonicClock.now() + wait.seconds
        }
        guard feed.wait(after: seen, until: deadline, clientGone: request.clientGone) == .woken
        else { return wait.answer }
      } catch let start as FeedStreamStart {
        return stream(request, start)
      } catch {
        return NCMBService.failure(error)
      }
    }
  }

  /// Waits and streams end now, answered (`HTTPServer.stop`).
  public func serverStopping() { feed.stop() }

  private func stream(_ request: HTTPRequest, _ start: FeedStreamStart) -> HTTPResponse {
    let slot: FeedWatcher.Slot
    do {
      slot = try feed.enter(user: start.user, address: request.clientAddress)
    } catch {
      return NCMBService.failure(error)
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
      let client = try SessionLookup.client(request, pooled.store, nil)
      return try client.changes(since: since, limit: FeedEvents.batchLimit)
    }
  }
}

/// The events of one `forum/feed` stream, made as the client takes them.
final class FeedEvents: HTTPBodyStream {
  /// A comment this often when nothing happens: proxies keep the connection, and a client gone
  /// is found by the write.
  static let heartbeatSeconds = 15.0
  static let batchLimit = 500

  /// Where the stream is. The transport asks for the next bytes on one thread at a time, but
  /// not always the same one.
  private struct Progress {
    var cursor: Int64
    var started = false
    var ended = false
  }

  private let service: NCMBService
  private let request: HTTPRequest
  private let reader: RateLimits.Reader?
  private let progress: Mutex<Progress>
  private let slot: Mutex<FeedWatcher.Slot?>

  init(
    service: NCMBService, request: HTTPRequest, since: Int64, user: String?,
    slot: FeedWatcher.Slot
  ) {
    self.service = service
    self.request = request
    progress = Mutex(Progress(cursor: since))
    self.slot = Mutex(slot)
    reader = service.rateLimits.reader(request, user: user)
  }

  deinit { finished() }

  func finished() {
    if let slot = slot.withLock({ $0.take() }) { service.feed.leave(slot) }
  }

  func next() -> [UInt8]? {
    var progress = self.progress.withLock { $0 }
    defer { self.progress.withLock { $0 = progress } }
    guard !progress.ended else { return nil }
    if !progress.started {
      progress.started = true
      // Sent at once, so the client knows the stream is open before anything happens.
      return Array(": forum change feed\nretry: 2000\n\n".utf8)
    }
    let heartbeat = MonotonicClock.now() + FeedEvents.heartbeatSeconds
    while true {
      let seen = service.feed.current
      if service.feed.isStopping {
        progress.ended = true
        return nil
      }
      let batch: ChangeBatch
      do {
        if let refusal = service.rateLimits.readRefusal(reader) { throw refusal }
        batch = try service.readFeed(request, since: progress.cursor)
      } catch {
        // Said once as an event, then the stream ends (the client may come back).
        progress.ended = true
        return Array("event: error\ndata: ".utf8) + NCMBService.failure(error).body
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
      progress.cursor = batch.next
      if !out.isEmpty {
        service.rateLimits.charge(reader, bytes: out.count)
        return out
      }
      if batch.hasMore { continue }
      switch service.feed.wait(after: seen, until: heartbeat, clientGone: request.clientGone) {
      case .woken: continue
      case .timedOut: return Array(": heartbeat\n\n".utf8)
      case .stopping, .clientGone:
        progress.ended = true
        return nil
      }
    }
  }
}
