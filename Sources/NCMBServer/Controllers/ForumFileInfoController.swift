@_spi(Server) import Datastore

/// `POST forum/fileInfo`: a file's metadata (`{"name"}`).
struct ForumFileInfoController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    return ForumWire.answer(try call.client.fileInfo(name: try body.string("name")).wire)
  }
}
