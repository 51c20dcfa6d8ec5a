@_spi(Server) import Datastore

/// `GET forum/clock`: the engine's clock and the change feed's newest number.
struct ForumClockController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.method == "GET" else { throw NCMBError.method }
    return ForumWire.answer(
      .object([
        "now": .int(try call.store.now()), "latestChange": .int(try call.client.latestChange()),
      ]))
  }
}
