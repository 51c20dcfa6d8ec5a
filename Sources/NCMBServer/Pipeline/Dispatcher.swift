import Datastore

/// An admitted request to its answer: its session (`SessionLookup`), its route (`NCMBRoute`),
/// the read cache (`CachedReads`), its resource's controller; a GET's answer charged to its
/// reader. Runs on a borrowed connection, alone for a read or in a write batch's savepoint.
struct Dispatcher: Sendable {
  let policy: NCMBPolicy
  let limits: ServeLimits
  let rateLimits: RateLimits

  func serve(_ request: HTTPRequest, _ mark: StateMark?, _ pooled: StorePool.Pooled)
    throws -> HTTPResponse
  {
    let client = try SessionLookup.client(request, pooled.store, mark)
    // A remote engine's kept session answer, checked before anything is done.
    if let changed = try ForumSessionController.changed(request, client) { return changed }
    let route = try NCMBRoute(path: request.path)
    let call = NCMBCall(
      request: request, route: route, store: pooled.store, client: client, policy: policy,
      limits: limits, rates: rateLimits)
    let controller = route.resource.controller
    let answer = {
      try CachedReads.answer(call, pooled) {
        try SessionLookup.refusal(of: client) { try controller.respond(to: call) }
      }
    }
    // A GET's answer is charged to its reader's bytes a minute, kept answers too (they cost
    // the wire as much); one refused for its size costs the whole answer budget.
    // The reads inside a `POST batch` are charged each on its own (`BatchController`).
    let reader = route.resource == .login ? nil : rateLimits.reader(request, user: client.userId)
    return try rateLimits.charged(reader) { () throws -> HTTPResponse in
      guard call.answersInWire else { return try answer() }
      // The engine's refusal as the board's wire says it, as the board's own endpoints do.
      do {
        return try answer()
      } catch let error as DatastoreError
        where !(error.code == .authentication && error.detail == nil) && !error.isStop
      {
        return ForumWire.refusal(error)
      }
    }
  }
}
