@_spi(Server) import Datastore

/// `POST forum/delete`: deletes one object with the rules' cascades.
struct ForumDeleteController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    try call.client.delete(try body.string("className"), objectId: try body.string("objectId"))
    return ForumWire.done
  }
}
