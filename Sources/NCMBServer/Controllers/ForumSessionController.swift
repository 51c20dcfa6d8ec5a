@_spi(Server) import Datastore

/// `GET forum/session`: the session's user, its principals and whether it owns the board (what
/// a remote engine's sign-in and `caller(sessionToken:)` learn).
struct ForumSessionController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.method == "GET" else { throw NCMBError.method }
    guard let userId = call.client.userId else { throw DatastoreError(.authentication) }
    try call.client.refreshPrincipals()
    let user = try call.client.get(User.className, objectId: userId)
    return ForumWire.answer(
      .object([
        "principals": call.client.principals.wire, "user": user.wire,
        "owner": .bool(try call.client.isBoardOwner),
      ]))
  }
}
