/// Group commit (`Datastore.group`: SQLite, PostgreSQL): requests that may
/// write wait here; whichever arrives while nobody is writing takes every request waiting (up
/// to `batchLimit`), runs them with `run` (one transaction, one commit) and hands each its
/// answer. Nobody is answered before the batch that holds their write has committed. While one
/// batch commits the next gathers, so the more writers wait, the fewer commits each pays.
///
/// Each waiting request sleeps on a handoff of its own (`Handoff`) and is woken once: with its
/// answer, or to lead the next batch (the first in line, handed the lead by the batch before).
/// One condition for all, broadcast at every batch's answers and again at its end, woke every
/// waiter twice a batch for nothing; on two cores the batch's writer lost the processor to them,
/// and the gaps between batches were a third of the time the queue was held (`forum serve`'s
/// POST, BENCHMARKS N30).
final class WriteQueue: Sendable {
  /// Most requests one batch takes: a batch holds the database's write lock while it runs.
  static let batchLimit = 64

  /// What a waiting request is woken with.
  private enum Turn: Sendable {
    case answered(HTTPResponse)
    /// The batch before has ended: this request is the first in line and writes the next.
    case lead
  }

  /// A request in line, and where its turn is handed to it.
  private final class Place: Sendable {
    let request: HTTPRequest
    let turn = Handoff<Turn>()
    init(_ request: HTTPRequest) { self.request = request }
  }

  private struct State {
    var waiting: [Place] = []
    /// A batch is being written (or its writer is handing the lead on): nobody else takes one.
    var writing = false
    /// The most requests one batch took so far (tests see batches form).
    var largest = 0
    /// Requests taken into batches so far (tests see who queued).
    var written = 0
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
    let place = Place(request)
    let leads = shared.withLock { state -> Bool in
      state.waiting.append(place)
      // Nobody writes (then nobody else waits): this request writes the batch, itself first.
      guard !state.writing else { return false }
      state.writing = true
      return true
    }
    if !leads, case .answered(let answer) = place.turn.take() { return answer }
    // This request leads. It is first in line (nobody waits while nobody writes; the lead is
    // handed to the first), so the batch holds it.
    let batch = shared.withLock { state in
      let batch = Array(state.waiting.prefix(WriteQueue.batchLimit))
      state.waiting.removeFirst(batch.count)
      state.largest = max(state.largest, batch.count)
      state.written += batch.count
      return batch
    }
    let answers = run(batch.map(\.request))
    var own = NCMBService.failure(NCMBError.system)
    for (index, waiter) in batch.enumerated() {
      // Every waiter is woken, answered or not (a `run` that lost one must not hang it).
      let answer = index < answers.count ? answers[index] : NCMBService.failure(NCMBError.system)
      if waiter === place { own = answer } else { waiter.turn.hand(.answered(answer)) }
    }
    // The upkeep runs before the next batch, which gathers meanwhile.
    between(shared.withLock { $0.waiting.isEmpty })
    let next = shared.withLock { state -> Place? in
      if state.waiting.isEmpty { state.writing = false }
      return state.waiting.first
    }
    next?.turn.hand(.lead)
    return own
  }
}
