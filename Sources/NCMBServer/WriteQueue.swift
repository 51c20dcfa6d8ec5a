#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

/// Group commit (`Datastore.group`: SQLite, PostgreSQL): requests that may write wait here, and
/// a thread of the queue's own takes every request waiting (up to `batchLimit`), runs them with
/// `run` (one transaction, one commit) and hands each its answer. Nobody is answered before the
/// batch that holds their write has committed. While one batch commits the next gathers, so
/// the more writers wait, the fewer commits each pays.
///
/// Each waiting request sleeps on a handoff of its own (`Handoff`) and is woken once, with its
/// answer. The writer goes from one batch to the next without waiting for anybody to wake. Two
/// designs measured before this one (`forum serve`'s POSTs, BENCHMARKS N30): one condition for
/// every waiter, broadcast at each batch's answers and again at its end, woke each waiter two or
/// three times a batch for nothing; a request that found nobody writing wrote the batch itself
/// and handed the next to the first in line, and the batches then stood still while that thread
/// woke (a tenth of the time the queue was held).
final class WriteQueue: Sendable {
  /// Most requests one batch takes: a batch holds the database's write lock while it runs.
  static let batchLimit = 64

  /// Requests written between two steps of the upkeep while requests keep coming (`between`;
  /// once the queue is empty it runs after every batch). A step costs a transaction whether or
  /// not it finds work, and indexing waits for dozens of queued rows anyway.
  static let upkeepEvery = 32

  /// A request in line, and where its answer is handed to it.
  private final class Place: Sendable {
    let request: HTTPRequest
    let answer = Handoff<HTTPResponse>()
    init(_ request: HTTPRequest) { self.request = request }
  }

  private struct State {
    var waiting: [Place] = []
    /// A batch is being written.
    var writing = false
    /// The queue is gone: the writer ends once nobody waits.
    var stopped = false
    /// The most requests one batch took so far (tests see batches form).
    var largest = 0
    /// Requests taken into batches so far (tests see who queued).
    var written = 0
  }

  /// What the writer thread holds: not the queue, whose end stops it.
  private final class Writer: Sendable {
    let shared = ConditionMutex(State())
    let run: @Sendable ([HTTPRequest]) -> [HTTPResponse]
    let between: @Sendable (Bool) -> Void
    init(
      run: @escaping @Sendable ([HTTPRequest]) -> [HTTPResponse],
      between: @escaping @Sendable (Bool) -> Void
    ) {
      self.run = run
      self.between = between
    }

    /// Takes the next batch, or nil once stopped and nobody waits.
    func next() -> [Place]? {
      shared.wait { state -> [Place]?? in
        guard !state.waiting.isEmpty else { return state.stopped ? .some(nil) : nil }
        let batch = Array(state.waiting.prefix(WriteQueue.batchLimit))
        state.waiting.removeFirst(batch.count)
        state.writing = true
        state.largest = max(state.largest, batch.count)
        state.written += batch.count
        return batch
      } ?? nil
    }

    /// Writes `batch`; then wakes each of its requests with its answer, and runs the upkeep
    /// (`between`) once the queue is empty or every `upkeepEvery` requests. With nobody
    /// waiting, the upkeep runs first: a lone request is answered once what its write queued is
    /// indexed, so that its client's next look finds the board at rest (as when each request
    /// wrote its own batch); while requests wait, they are answered first.
    func write(_ batch: [Place], sinceUpkeep: inout Int) {
      let answers = run(batch.map(\.request))
      sinceUpkeep += batch.count
      let idle = shared.withLock { $0.waiting.isEmpty }
      let upkeep = idle || sinceUpkeep >= WriteQueue.upkeepEvery
      if upkeep { sinceUpkeep = 0 }
      if upkeep, idle { between(true) }
      // Done before anybody is answered: an answered request never sees its batch written.
      shared.withLock { $0.writing = false }
      for (index, place) in batch.enumerated() {
        // Every request is woken, answered or not (a `run` that lost one must not hang it).
        place.answer.hand(
          index < answers.count ? answers[index] : NCMBService.failure(NCMBError.system))
      }
      if upkeep, !idle { between(false) }
    }

    func loop() {
      var sinceUpkeep = 0
      while let batch = next() { write(batch, sinceUpkeep: &sinceUpkeep) }
    }
  }

  private let writer: Writer
  /// The writer thread, joined when the queue ends (nil: it could not be started, and each
  /// request writes its own batch of one).
  private let thread: pthread_t?

  /// `run` answers every request of its batch, in order; `between` runs after a batch, before
  /// the next starts (which gathers meanwhile; `Writer.write` says when): index upkeep that no
  /// commit does (`Datastore.tidy`), told whether the queue is empty (the server is idle).
  init(
    run: @escaping @Sendable ([HTTPRequest]) -> [HTTPResponse],
    between: @escaping @Sendable (Bool) -> Void = { _ in }
  ) {
    let writer = Writer(run: run, between: between)
    self.writer = writer
    thread = startThread { writer.loop() }
  }

  /// Stops the writer thread and waits for it to end: what its batches hold (the service's
  /// database connections) is let go before the queue's owner is gone, not later on that thread.
  deinit {
    writer.shared.change { $0.stopped = true }
    guard let thread else { return }
    if pthread_equal(thread, pthread_self()) != 0 {
      pthread_detach(thread)
    } else {
      pthread_join(thread, nil)
    }
  }

  /// Requests waiting for the next batch, whether a batch is being written, the largest
  /// batch so far, and the requests written so far.
  var state: (waiting: Int, writing: Bool, largestBatch: Int, written: Int) {
    writer.shared.withLock { ($0.waiting.count, $0.writing, $0.largest, $0.written) }
  }

  /// The answer to `request`, once its batch has committed.
  func submit(_ request: HTTPRequest) -> HTTPResponse {
    guard thread != nil else { return writeAlone(request) }
    let place = Place(request)
    // Wakes the writer if it sleeps (no waiter, no system call).
    writer.shared.change { $0.waiting.append(place) }
    return place.answer.take()
  }

  /// Without the writer's thread: a batch of one, one at a time.
  private func writeAlone(_ request: HTTPRequest) -> HTTPResponse {
    _ = writer.shared.wait { state -> Bool? in
      guard !state.writing else { return nil }
      state.writing = true
      state.largest = max(state.largest, 1)
      state.written += 1
      return true
    }
    defer { writer.shared.change { $0.writing = false } }
    let answer = writer.run([request]).first ?? NCMBService.failure(NCMBError.system)
    writer.between(true)
    return answer
  }
}
