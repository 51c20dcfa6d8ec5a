import Datastore

/// The pipeline's second stage, after the limits: a request is NCMB's (its path under the API's
/// version), signed (application key, timestamp, HMAC over method, host, path and query) with
/// the board's keys, and its body no larger than its path takes. Nothing past it sees a request
/// that fails it: no session is looked up, no write queued.
struct SignatureCheck: Sendable {
  let database: DatabaseState
  let published: PublishedKeys

  /// What is checked before any database connection is borrowed: the API's version and the
  /// signature's headers present.
  static func headers(_ request: HTTPRequest) throws {
    try NCMBRoute.checkVersion(request.path)
    _ = try NCMBSignature.headers(request)
  }

  /// Checks `request` against the board's keys on a borrowed connection; returns the
  /// database's state mark for the session. Needs only the request's head and body length.
  func verify(_ request: HTTPRequest, _ pooled: StorePool.Pooled) throws -> StateMark? {
    let now = database.clock()
    let mark = try database.mark(pooled, now: now)
    guard
      let keys = try pooled.cache.keys(
        now: now, recheck: database.recheck,
        { try pooled.store.existingApplicationKeys().map(NCMBSignature.Keys.init) })
    else {
      throw NCMBError.noSuchApplication
    }
    published.note(keys.text)
    try NCMBSignature.verify(request, keys: keys, now: now)
    guard
      request.body.count <= ForumExtensionsController.largestBody(request)
        || request.header(lowercased: "content-type")?.lowercased().contains("multipart/") == true
    else { throw NCMBError.tooLarge }
    return mark
  }
}
