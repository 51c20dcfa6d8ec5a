@_spi(Server) import Datastore

/// `POST forum/setting`: a board setting as stored (`{"name"}` → `{"value"}`).
struct ForumSettingController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    let value = try call.client.setting(try body.string("name"))
    return ForumWire.answer(.object(["value": value.map(JSONValue.string) ?? .null]))
  }
}
