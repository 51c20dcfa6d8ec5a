@_spi(Server) import Datastore

/// `POST forum/perform`: one `WriteOperation` (a thread with its image and read mark, a comment
/// with its caught-up mark, a delete, an edit, a preference), run whole as the caller.
struct ForumPerformController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let operation = try WriteOperation(wire: .object(body.fields))
    return ForumWire.answer(try call.client.perform(operation).wire)
  }
}
