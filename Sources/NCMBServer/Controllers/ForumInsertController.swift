@_spi(Server) import Datastore

/// `POST forum/insert`: a new object (`{"className","fields","acl"}`), answered whole, the
/// rules' fields included (NCMB's `POST classes` answers only its id and date).
struct ForumInsertController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let object = try call.client.create(
      try body.string("className"), fields: try body.object("fields"),
      acl: try ACL(json: body["acl"] ?? .null))
    return ForumWire.answer(object.wire)
  }
}
