import Datastore

/// `GET forum/feed[?since=N]`: the change feed the caller may read as server-sent events
/// (`text/event-stream`), for apps: each change one event (`id:` its sequence, `data:` the
/// change as `ChangeWire` writes it), a gap after pruning an `event: missed`, a comment as a
/// heartbeat. A client that comes back sends `Last-Event-ID` (which wins over `since`) and goes
/// on after it; with neither, the stream starts at the newest change. The stream itself is the
/// service's (`FeedEvents`): this only checks the request.
struct ForumFeedController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.route.names.count == 1 else { throw NCMBError.notFound }
    guard call.method == "GET" else { throw NCMBError.method }
    let parameters = try NCMBQuery.parameters(call.request.rawQuery)
    for name in parameters.keys where name != "since" {
      throw NCMBError.invalid(name, "not a parameter of forum/feed (since)")
    }
    var since: Int64?
    if let text = call.request.header(lowercased: "last-event-id") {
      since = try ForumChangesController.integer(
        text.trimmingASCIISpaces, "Last-Event-ID", 0...Int64.max, default: 0)
    } else if let text = parameters["since"] {
      since = try ForumChangesController.integer(text, "since", 0...Int64.max, default: 0)
    }
    // Without a place to resume from, the stream starts at the newest change as of this
    // request, before its first byte is sent: a post right after the answer began is an event.
    throw FeedStreamStart(
      since: try since ?? call.client.latestChange(), user: call.client.userId)
  }
}

extension String {
  /// Without the spaces and tabs around it (a header value as some clients pad it).
  fileprivate var trimmingASCIISpaces: String {
    var text = Substring(self)
    while text.first == " " || text.first == "\t" { text = text.dropFirst() }
    while text.last == " " || text.last == "\t" { text = text.dropLast() }
    return String(text)
  }
}
