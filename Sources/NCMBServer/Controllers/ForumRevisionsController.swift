@_spi(Server) import Datastore

/// `POST forum/revisions`: a page of an object's kept revisions.
struct ForumRevisionsController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let page = try call.client.revisions(
      try body.string("className"), objectId: try body.string("objectId"),
      skip: try body.count("skip"), limit: try body.count("limit"))
    return ForumWire.answer(page.wire)
  }
}
