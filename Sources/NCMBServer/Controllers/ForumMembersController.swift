@_spi(Server) import Datastore

/// `POST forum/members`: the users in a role (`{"role"}` → `{"members":[…]}`).
struct ForumMembersController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let members = try call.client.members(ofRole: try body.string("role"))
    return ForumWire.answer(.object(["members": .array(members.map(JSONValue.string))]))
  }
}
