@_spi(Server) import Datastore

/// Runs the write queue's batches (`WriteQueue`): admitted requests that may write, each in its
/// own savepoint of one transaction, so a refused one undoes itself alone and gets its own
/// error; all answered after the commit. Between batches, the index upkeep no commit does.
struct WriteBatches: Sendable {
  let database: DatabaseState
  let dispatcher: Dispatcher

  /// One answer per request, in order.
  func write(_ requests: [HTTPRequest]) -> [HTTPResponse] {
    do {
      return try database.pool.withWriter { pooled in
        var answers = [HTTPResponse?](repeating: nil, count: requests.count)
        let before = pooled.store.ownChanges
        // Looked at before the transaction: a look inside it would read the batch's own rows,
        // which a rollback takes back, as written (`KeptAnswers.advance`).
        let mark = try database.mark(pooled, now: database.clock())
        let errors = try pooled.store.group(requests.count) { index in
          let request = requests[index]
          pooled.budget.begin(
            seconds: dispatcher.limits.timeLimitSeconds, clientGone: request.clientGone)
          defer { pooled.budget.end() }
          // A stop (`StorePool.stopAll`) that came before this request's turn: its statements
          // may be too short for the budget's look (`Connection.progressSteps`) to stop them.
          if let stop = pooled.budget.check() { throw DatastoreError(.systemError, reason: stop) }
          answers[index] = try dispatcher.serve(request, mark, pooled)
        }
        if pooled.store.ownChanges != before { database.noteCommit() }
        return requests.indices.map { index in
          errors[index].map(NCMBService.failure) ?? answers[index]
            ?? NCMBService.failure(NCMBError.system)
        }
      }
    } catch {
      // Nothing of the batch was committed.
      return Array(repeating: NCMBService.failure(error), count: requests.count)
    }
  }

  /// Between batches: a few steps when idle, so what the last batches queued is indexed
  /// before a pause.
  func tidy(idle: Bool) {
    _ = try? database.pool.withWriter {
      for _ in 0..<(idle ? 4 : 1) where $0.store.tidy(idle: idle) {}
    }
  }
}
