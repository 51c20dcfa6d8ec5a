@_spi(Server) import Datastore

/// `POST forum/get`: one object, whole (`{"className","objectId"}`).
struct ForumGetController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let object = try call.client.get(
      try body.string("className"), objectId: try body.string("objectId"))
    return ForumWire.answer(object.wire)
  }
}
