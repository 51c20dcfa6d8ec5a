/// Group commit (`Datastore.group`: SQLite, PostgreSQL): requests that may
/// write wait here; whichever arrives while nobody is writing takes every request waiting (up
/// to `batchLimit`), runs them with `run` (one transaction, one commit) and hands each its
/// answer. Nobody is answered before the batch that holds their write has committed. While one
/// batch commits the next gathers, so the more writers wait, the fewer commits each pays.
final class WriteQueue: Sendable {
  /// Most requests one batch takes: a batch holds the database's write lock while it runs.
  static let batchLimit = 64

  private struct State {
    var waiting: [(ticket: UInt64, request: HTTPRequest)] = []
    var tickets: UInt64 = 0
    /// The answers of a written batch, until each writer takes its own.
    var answers: [UInt64: HTTPResponse] = [:]
    var writing = false
    /// The most requests one batch took so far (tests see batches form).
    var largest = 0
    /// Requests taken into batches so far (tests see who queued).
    var written = 0
  }

  /// What a writer finds when it looks: its answer, or a batch to write (its own among it).
  private enum Turn {
    case answered(HTTPResponse)
    case write([(ticket: UInt64, request: HTTPRequest)])
  }

  private let run: @Sendable ([HTTPRequest]) -> [HTTPResponse]
  /// Run after each batch has its answers, before the next batch starts (which gathers
  /// meanwhile): index upkeep that no commit does (`Datastore.tidy`); true when no request
  /// waits (the server is idle).
  private let between: @Sendable (Bool) -> Void
  private let shared = ConditionMutex(State())

  /// `run` answers every request of its batch, in order.
  init(
    run: @escaping @Sendable ([HTTPRequest]) -> [HTTPResponse],
    between: @escaping @Sendable (Bool) -> Void = { _ in }
  ) {
    self.run = run
    self.between = between
  }

  /// Requests waiting for the next batch, whether a batch is being written, the largest
  /// batch so far, and the requests written so far.
  var state: (waiting: Int, writing: Bool, largestBatch: Int, written: Int) {
    shared.withLock { ($0.waiting.count, $0.writing, $0.largest, $0.written) }
  }

  /// The answer to `request`, once its batch has committed.
  func submit(_ request: HTTPRequest) -> HTTPResponse {
    let ticket = shared.withLock {
      $0.tickets &+= 1
      $0.waiting.append(($0.tickets, request))
      return $0.tickets
    }
    while true {
      let turn = shared.wait { state -> Turn? in
        if let answer = state.answers.removeValue(forKey: ticket) { return .answered(answer) }
        if state.writing { return nil }
        // Nobody writes: this thread runs the batch, its own request among the first.
        state.writing = true
        let batch = Array(state.waiting.prefix(WriteQueue.batchLimit))
        state.waiting.removeFirst(batch.count)
        state.largest = max(state.largest, batch.count)
        state.written += batch.count
        return .write(batch)
      }
      guard case .write(let batch) = turn else {
        if case .answered(let answer) = turn { return answer }
        continue  // not reached: a wait without a deadline ends with a turn
      }
      let answers = run(batch.map(\.request))
      // The batch's writers are answered now; the upkeep runs before the next batch.
      let idle = shared.change { state in
        for (job, answer) in zip(batch, answers) { state.answers[job.ticket] = answer }
        return state.waiting.isEmpty
      }
      between(idle)
      shared.change { $0.writing = false }
    }
  }
}
