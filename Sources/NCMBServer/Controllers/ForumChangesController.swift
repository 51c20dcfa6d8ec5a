import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `GET forum/changes?since=N[&limit=M][&wait=SECONDS]`: the change feed the caller may read
/// (`DatastoreClient.changes`, ACL-filtered by the engine), as `ChangeWire` encodes it. With
/// `wait` and nothing new, the service holds the request until the engine's wake-up says
/// something was committed (`FeedWaits`): long-poll. Without `since` the answer is empty and its
/// `next` is the feed's newest change: where a reader that wants only what comes next starts.
struct ForumChangesController: NCMBController {
  /// The longest `wait`: under the transport's idle timeout, and what a waiting request may
  /// hold of its connection.
  static let maximumWaitSeconds = 30
  static let defaultLimit = 500

  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.route.names.count == 1 else { throw NCMBError.notFound }
    guard call.method == "GET" else { throw NCMBError.method }
    let parameters = try NCMBQuery.parameters(call.request.rawQuery)
    for name in parameters.keys where !["since", "limit", "wait"].contains(name) {
      throw NCMBError.invalid(name, "not a parameter of forum/changes (since, limit, wait)")
    }
    let limit = try Self.integer(
      parameters["limit"], "limit", 1...Int64(Query.maximumLimit),
      default: Int64(Self.defaultLimit))
    let wait = try Self.integer(
      parameters["wait"], "wait", 0...Int64(Self.maximumWaitSeconds), default: 0)
    guard parameters["since"] != nil else {
      let latest = try call.client.latestChange()
      return Self.answer(ChangeBatch(changes: [], next: latest, hasMore: false))
    }
    let since = try Self.integer(parameters["since"], "since", 0...Int64.max, default: 0)
    let batch = try call.client.changes(since: since, limit: Int(limit))
    let answer = Self.answer(batch)
    if wait > 0, batch.changes.isEmpty, !batch.hasMore, !batch.missed {
      throw FeedWait(seconds: Double(wait), answer: answer, user: call.client.userId)
    }
    return answer
  }

  static func answer(_ batch: ChangeBatch) -> HTTPResponse {
    HTTPResponse(status: 200, headers: NCMBService.jsonHeaders, body: ChangeWire.bytes(batch))
  }

  /// A decimal integer in `range` (no sign, no spaces, at most 19 digits), else E400002 naming it.
  static func integer(
    _ text: String?, _ name: String, _ range: ClosedRange<Int64>, default value: Int64
  ) throws -> Int64 {
    guard let text else { return value }
    guard !text.isEmpty, text.utf8.count <= 19,
      text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
      let number = Int64(text), range.contains(number)
    else {
      throw NCMBError.invalid(name, "an integer from \(range.lowerBound) to \(range.upperBound)")
    }
    return number
  }
}
