@_spi(Server) import Datastore

/// `POST forum/unread`: the caller's read position and unread children in each parent
/// (`{"className","objectIds","countUpTo"}` → `{"states":{id: …}}`).
struct ForumUnreadController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let states = try call.client.unread(
      try body.string("className"), objectIds: try body.strings("objectIds"),
      countUpTo: Int(clamping: try body.int("countUpTo")))
    return ForumWire.answer(.object(["states": .object(states.mapValues(\.wire))]))
  }
}
