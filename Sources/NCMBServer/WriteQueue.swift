#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Group commit (`Datastore.group`: SQLite, PostgreSQL): requests that may
/// write wait here; whichever arrives while nobody is writing takes every request waiting (up
/// to `batchLimit`), runs them with `run` (one transaction, one commit) and hands each its
/// answer. Nobody is answered before the batch that holds their write has committed. While one
/// batch commits the next gathers, so the more writers wait, the fewer commits each pays.
/// Unchecked: its state is behind a pthread mutex with a condition variable for the waiters,
/// which Synchronization does not have.
final class WriteQueue: @unchecked Sendable {
  final class Job {
    let request: HTTPRequest
    var response: HTTPResponse?
    init(_ request: HTTPRequest) { self.request = request }
  }

  /// Most requests one batch takes: a batch holds the database's write lock while it runs.
  static let batchLimit = 64

  private let run: ([Job]) -> Void
  /// Run after each batch has its answers, before the next batch starts (which gathers
  /// meanwhile): index upkeep that no commit does (`Datastore.tidy`); true when no request
  /// waits (the server is idle).
  private let between: (Bool) -> Void
  private var waiting: [Job] = []
  private var writing = false
  /// The most requests one batch took so far (tests see batches form).
  private var largest = 0
  private var mutex = pthread_mutex_t()
  private var done = pthread_cond_t()

  /// `run` must give every job of its batch a response.
  init(run: @escaping ([Job]) -> Void, between: @escaping (Bool) -> Void = { _ in }) {
    self.run = run
    self.between = between
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&done, nil)
  }

  deinit {
    pthread_cond_destroy(&done)
    pthread_mutex_destroy(&mutex)
  }

  /// Requests waiting for the next batch, whether a batch is being written, and the largest
  /// batch so far.
  var state: (waiting: Int, writing: Bool, largestBatch: Int) {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return (waiting.count, writing, largest)
  }

  /// The answer to `request`, once its batch has committed.
  func submit(_ request: HTTPRequest) -> HTTPResponse {
    let job = Job(request)
    pthread_mutex_lock(&mutex)
    waiting.append(job)
    while job.response == nil {
      if writing {
        pthread_cond_wait(&done, &mutex)
        continue
      }
      // Nobody writes: this thread runs the batch, its own request among the first.
      writing = true
      let batch = Array(waiting.prefix(WriteQueue.batchLimit))
      waiting.removeFirst(batch.count)
      largest = max(largest, batch.count)
      pthread_mutex_unlock(&mutex)
      run(batch)
      // The batch's writers are answered now; the upkeep runs before the next batch.
      pthread_mutex_lock(&mutex)
      pthread_cond_broadcast(&done)
      let idle = waiting.isEmpty
      pthread_mutex_unlock(&mutex)
      between(idle)
      pthread_mutex_lock(&mutex)
      writing = false
      pthread_cond_broadcast(&done)
    }
    pthread_mutex_unlock(&mutex)
    return job.response!
  }
}
