@_spi(Server) import Datastore

/// `POST forum/setSetting`: sets or clears a board setting (`{"name","value"}`).
struct ForumSetSettingController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    try call.client.setSetting(try body.string("name"), value: try body.optionalString("value"))
    return ForumWire.done
  }
}
