@_spi(Server) import Datastore

/// `GET forum/session`: the session's user, its principals, whether it owns the board and the
/// answer's tag (`SessionWire`: what a remote engine's sign-in and `caller(sessionToken:)`
/// learn, and what it keeps between commands).
struct ForumSessionController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.method == "GET" else { throw NCMBError.method }
    return ForumWire.answer(try ForumSessionController.answer(call.client))
  }

  /// The session's answer now, its roles read again.
  static func answer(_ client: DatastoreClient) throws -> JSONValue {
    guard let userId = client.userId else { throw DatastoreError(.authentication) }
    try client.refreshPrincipals()
    let user = try client.get(User.className, objectId: userId)
    return SessionWire.answer(
      principals: client.principals, user: user, owner: try client.isBoardOwner)
  }

  /// A request that carries a kept answer's tag (`SessionWire.tagHeader`) which is not the
  /// session's answer's now: refused before anything is done, so that the client asks for the
  /// answer again and decides by it. Nil: the request goes on (no tag, or the same answer).
  static func changed(_ request: HTTPRequest, _ client: DatastoreClient) throws -> HTTPResponse? {
    guard let tag = request.header(lowercased: tagHeader), client.userId != nil else { return nil }
    guard case .string(let now)? = try answer(client).objectValue?["tag"], now != tag else {
      return nil
    }
    return NCMBService.json(
      .object([
        "code": .string(SessionWire.changedCode),
        "error": .string("The session's roles or user changed: ask forum/session again."),
      ]), status: SessionWire.changedStatus)
  }

  private static let tagHeader = SessionWire.tagHeader.lowercased()
}
