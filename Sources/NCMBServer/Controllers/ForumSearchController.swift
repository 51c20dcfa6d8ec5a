@_spi(Server) import Datastore

/// `POST forum/search`: a `TextSearch` among what the caller may read, best first.
struct ForumSearchController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let search = try TextSearch(wire: .object(try ForumWire.body(call).fields))
    return ForumWire.answer(DataObject.wire(try call.client.search(search)))
  }
}
