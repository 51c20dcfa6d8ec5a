@_spi(Server) import Datastore

/// `POST forum/fetch`: the objects of any class with these ids the caller may read
/// (`{"objectIds","keys"?,"budget"?}`), for an `include` the client resolves.
struct ForumFetchController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let keys = body["keys"] == nil ? nil : Set(try body.strings("keys"))
    let budget = try body.optionalInt("budget").map { Int(clamping: $0) }
    let objects = try call.client.fetch(
      objectIds: try body.strings("objectIds"), keys: keys, budget: budget)
    return ForumWire.answer(DataObject.wire(objects))
  }
}
