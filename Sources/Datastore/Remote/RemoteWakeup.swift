#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The remote engine's wake-up: one thread that long-polls the server's change feed
/// (`GET forum/changes?since=N&limit=1&wait=S`, held by the server until its engine's own
/// wake-up says something was committed that the member may read) and, when something came or
/// the wait failed, writes a byte to a pipe whose other end the prompt waits on with stdin
/// (`DatastoreEngine.wakeFileDescriptor`). Nothing is polled by time: the server answers when
/// there is something, or at the end of its wait, and the thread asks again.
final class RemoteWakeup: @unchecked Sendable {
  let descriptor: Int32
  private let writeEnd: Int32
  private var lock = pthread_mutex_t()
  private var failure: Error?
  private var since: Int64
  private let poll: (Int64) throws -> ChangeBatch

  /// The engine went: the thread ends.
  struct Closed: Error {}

  /// The longest the server is asked to hold one wait (its own limit is 30 s).
  static let waitSeconds = 25

  init(since: Int64, poll: @escaping (Int64) throws -> ChangeBatch) throws {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else {
      throw DatastoreError(.systemError, detail: "no pipe for the live feed: \(errno)")
    }
    descriptor = ends[0]
    writeEnd = ends[1]
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
    self.since = since
    self.poll = poll
    pthread_mutex_init(&lock, nil)
    var thread = pthread_t()
    let context = Unmanaged.passRetained(self).toOpaque()
    guard
      pthread_create(
        &thread, nil,
        { context in
          Unmanaged<RemoteWakeup>.fromOpaque(context!).takeRetainedValue().run()
          return nil
        }, context) == 0
    else {
      Unmanaged<RemoteWakeup>.fromOpaque(context).release()
      throw DatastoreError(.systemError, detail: "no thread for the live feed")
    }
    pthread_detach(thread)
  }

  /// Whether the thread was woken since the last call; throws what stopped its last wait.
  func pending() throws -> Bool {
    var byte: UInt8 = 0
    var woken = false
    while read(descriptor, &byte, 1) == 1 { woken = true }
    pthread_mutex_lock(&lock)
    let failed = failure
    failure = nil
    pthread_mutex_unlock(&lock)
    if let failed { throw failed }
    return woken
  }

  private func wake() {
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }

  private func run() {
    while true {
      do {
        let batch = try poll(since)
        since = batch.next
        if !batch.changes.isEmpty || batch.missed { wake() }
      } catch is Closed {
        return
      } catch is Interrupted {
        // Ctrl-C at the prompt stops a command's wait, not the feed's: ask again.
        usleep(100_000)
      } catch {
        pthread_mutex_lock(&lock)
        failure = error
        pthread_mutex_unlock(&lock)
        wake()
        // The server is away: ask again in a while, not in a loop.
        sleep(2)
      }
    }
  }
}
