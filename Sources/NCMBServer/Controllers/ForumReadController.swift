@_spi(Server) import Datastore

/// `POST forum/read`: moves the caller's read position (`{"call":"markRead","className",
/// "objectId","upTo"}`, `advanceRead` with `to`, `markAllRead` with `className`).
struct ForumReadController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let className = try body.string("className")
    switch try body.string("call") {
    case "markRead":
      try call.client.markRead(
        className, objectId: try body.string("objectId"), upTo: try body.int("upTo"))
    case "advanceRead":
      try call.client.advanceRead(
        className, objectId: try body.string("objectId"), to: try body.int("to"))
    case "markAllRead": try call.client.markAllRead(className)
    default: throw Wire.malformed("call")
    }
    return ForumWire.done
  }
}
