@_spi(Server) import Datastore
import ForumCrypto

/// `POST forum/putFile`: stores a file (`{"name","bytes" (base64),"mimeType","acl"}`), answered
/// with its metadata.
struct ForumPutFileController: NCMBController {
  func respond(to call: NCMBCall) throws -> HTTPResponse {
    let body = try ForumWire.body(call)
    guard let bytes = Crypto.base64Decode(try body.string("bytes")) else {
      throw Wire.malformed("bytes")
    }
    let info = try call.client.putFile(
      name: try body.string("name"), bytes: bytes, mimeType: try body.string("mimeType"),
      acl: try ACL(json: body["acl"] ?? .null))
    return ForumWire.answer(info.wire)
  }
}
