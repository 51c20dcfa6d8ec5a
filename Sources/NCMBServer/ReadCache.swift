import Datastore

/// Answers to reads, kept with one pooled datastore while the database stays in the state they
/// were read in (`Datastore.stateMark`): the next identical read by a caller with the same
/// principals is answered without reading or encoding anything. Any commit, by this server or
/// anyone else (the prompt, `sqlite3`), moves the mark, and the first request after it empties
/// the cache. A caller's answers are keyed by their principals (`*`, their user id, their
/// roles), so nobody is ever given what another caller's ACL let them read. An engine without a
/// mark (PostgreSQL) keeps nothing.
///
/// Looking at the mark costs a statement and a shared lock, so it is looked at only when this
/// server has written since the last look (`StorePool`'s generation: its own writes are seen by
/// the next request on every connection) or when the last look is `recheck` milliseconds old: a
/// write by another process (the prompt, `sqlite3`) is seen at most that late.
final class ReadCache {
  private var mark: StateMark?
  private var answers: [String: HTTPResponse] = [:]
  private var bytes = 0
  /// The board's keys as read at `mark`, ready to check signatures.
  private var keys: NCMBSignature.Keys?
  /// The pool's generation and the clock when `mark` was looked at.
  private var lookedGeneration: UInt64 = 0
  private var lookedAt: Int64 = 0

  /// Bodies kept per pooled datastore, in all, and the largest one kept.
  static let maximumBytes = 2 << 20
  static let maximumAnswerBytes = 256 << 10

  /// Starts a request: the database's mark, looked at again with `look` unless the server
  /// wrote nothing since the last look (`generation`) and that look is younger than `recheck`
  /// milliseconds at `now`. What was kept at another mark goes. Nil: nothing may be kept.
  func revalidate(
    generation: UInt64, now: Int64, recheck: Int64, look: () throws -> StateMark?
  ) rethrows -> StateMark? {
    if let mark, generation == lookedGeneration, now >= lookedAt, now - lookedAt < recheck {
      return mark
    }
    let looked = try look()
    lookedGeneration = generation
    lookedAt = now
    if looked == nil || looked != mark {
      // Without a mark (PostgreSQL) the keys stay for their own `recheck` (`keys`).
      if looked != nil || mark != nil { keys = nil }
      mark = looked
      answers.removeAll()
      bytes = 0
    }
    return looked
  }

  /// When `keys` were read without a mark.
  private var keysReadAt: Int64 = 0

  /// The board's keys: read from the store once per state, or, on an engine without a mark
  /// (PostgreSQL), again once they are `recheck` milliseconds old at `now` (the server's own
  /// writes never change them: `forum keys --rotate` is the owner's, from another process, and
  /// is seen as late as another process's write on SQLite).
  func keys(now: Int64, recheck: Int64, _ read: () throws -> NCMBSignature.Keys?) throws
    -> NCMBSignature.Keys?
  {
    if let keys, mark != nil || (now >= keysReadAt && now - keysReadAt < recheck) {
      return keys
    }
    let read = try read()
    keys = read
    keysReadAt = now
    return read
  }

  func answer(for key: String) -> HTTPResponse? { answers[key] }

  func keep(_ response: HTTPResponse, for key: String) {
    guard mark != nil, response.status == 200,
      response.body.count <= ReadCache.maximumAnswerBytes
    else { return }
    if bytes + response.body.count > ReadCache.maximumBytes {
      answers.removeAll()
      bytes = 0
    }
    answers[key] = response
    bytes += response.body.count
  }

  /// What a read's answer depends on besides the database: the request as sent (method, path,
  /// query) and who asks (their principals, sorted).
  static func key(_ request: HTTPRequest, _ principals: Principals) -> String {
    var key = request.method + " " + request.path + "?" + request.rawQuery + "\n"
    for (index, name) in principals.names.sorted().enumerated() {
      if index > 0 { key += " " }
      key += name
    }
    return key
  }
}
