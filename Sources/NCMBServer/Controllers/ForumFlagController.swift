@_spi(Server) import Datastore

/// `POST forum/flag`: sets or clears a flag a `FlagRule` declares (a pin).
struct ForumFlagController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    try call.client.setFlag(
      try body.string("className"), objectId: try body.string("objectId"),
      field: try body.string("field"), on: try body.bool("on"))
    return ForumWire.done
  }
}
