import Datastore

/// Answers to reads, kept with one pooled datastore while the database stays in the state they
/// were read in (`Datastore.stateMark`): the next identical read by a caller with the same
/// principals is answered without reading or encoding anything. Any commit, by this server or
/// anyone else (the prompt, `sqlite3`), moves the mark, and the first request after it empties
/// the cache. A caller's answers are keyed by their principals (`*`, their user id, their
/// roles), so nobody is ever given what another caller's ACL let them read. An engine without a
/// mark (PostgreSQL) keeps nothing.
final class ReadCache {
  private var mark: StateMark?
  private var answers: [String: HTTPResponse] = [:]
  private var bytes = 0
  /// The board's keys as read at `mark`.
  private var keys: ApplicationKeys?

  /// Bodies kept per pooled datastore, in all, and the largest one kept.
  static let maximumBytes = 2 << 20
  static let maximumAnswerBytes = 256 << 10

  /// Starts a request at `mark`: what was kept at another mark goes.
  func revalidate(_ mark: StateMark?) {
    guard mark == nil || mark != self.mark else { return }
    self.mark = mark
    answers.removeAll()
    bytes = 0
    keys = nil
  }

  /// The board's keys: read from the store once per state.
  func keys(_ read: () throws -> ApplicationKeys?) throws -> ApplicationKeys? {
    if let keys { return keys }
    let read = try read()
    if mark != nil { keys = read }
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
