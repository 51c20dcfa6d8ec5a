@_spi(Server) import Datastore

/// `POST forum/perform`: one `WriteOperation` (a thread with its image and read mark, a comment
/// with its caught-up mark, a delete, an edit, a preference), run whole as the caller. Anyone
/// with the keys may send one: each object and file a step writes passes the application's
/// checks (`NCMBPolicy.engineObject`, `NCMBPolicy.file`), and the whole operation the storage
/// per user (`ObjectsController.withinStorage`).
struct ForumPerformController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let operation = try WriteOperation(wire: .object(body.fields))
    let checks = StepChecks(
      object: { className, fields, objectId in
        try ObjectsController.engineChecked(call, className, fields, objectId)
      },
      file: { name, bytes, mimeType in
        try call.policy.checkedFile(name, bytes, mimeType)
      })
    let outcome = try ObjectsController.withinStorage(call) {
      try call.client.perform(operation, checking: checks)
    }
    return ForumWire.answer(outcome.wire)
  }
}
