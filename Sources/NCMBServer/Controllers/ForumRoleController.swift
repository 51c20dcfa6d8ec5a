@_spi(Server) import Datastore

/// `POST forum/role`: grants or revokes a role (`{"role","userId","member"}`).
struct ForumRoleController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    try call.client.setRole(
      try body.string("role"), userId: try body.string("userId"), member: try body.bool("member"))
    return ForumWire.done
  }
}
