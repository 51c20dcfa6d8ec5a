@_spi(Server) import Datastore

/// `POST forum/count`: how many objects a `Query` matches among those the caller may read.
struct ForumCountController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let query = try Query(wire: .object(try ForumWire.body(call).fields))
    return ForumWire.answer(.object(["count": .int(Int64(try call.client.count(query)))]))
  }
}
