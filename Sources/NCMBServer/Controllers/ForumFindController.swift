@_spi(Server) import Datastore

/// `POST forum/find`: a `Query` (every condition the engines take, `include` resolved).
struct ForumFindController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let query = try Query(wire: .object(try ForumWire.body(call).fields))
    return ForumWire.answer(DataObject.wire(try call.client.find(query)))
  }
}
