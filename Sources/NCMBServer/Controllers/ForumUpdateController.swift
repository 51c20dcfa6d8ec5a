@_spi(Server) import Datastore

/// `POST forum/update`: sets fields and adds to counters of one object
/// (`{"className","objectId","set","increment","acl"?}`), answered whole.
struct ForumUpdateController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let increments = try body.object("increment").mapValues {
      guard case .int(let value) = $0 else { throw Wire.malformed("increment") }
      return value
    }
    let object = try call.client.update(
      try body.string("className"), objectId: try body.string("objectId"),
      set: try body.object("set"), increment: increments,
      acl: try body["acl"].map { try ACL(json: $0) })
    return ForumWire.answer(object.wire)
  }
}
