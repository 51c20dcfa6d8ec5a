@_spi(Server) import Datastore

/// `POST forum/moderate`: takes a public object down, leaving a tombstone (moderators).
struct ForumModerateController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    try call.client.moderate(try body.string("className"), objectId: try body.string("objectId"))
    return ForumWire.done
  }
}
