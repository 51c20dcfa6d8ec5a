@_spi(Server) import Datastore

/// What the board's own endpoints share: a request's body read as the wire's JSON
/// (`Sources/Datastore/Wire`), an answer written so, and a refusal with the field and reason
/// the engine gave (and, for `perform`, the step), which the remote engine throws again as
/// the same `DatastoreError`.
enum ForumWire {
  static func body(_ call: NCMBCall) throws -> WireObject {
    guard call.method == "POST" else { throw NCMBError.method }
    let value: JSONValue
    do {
      value = try Wire.parse(call.request.body)
    } catch {
      throw NCMBError.invalidJSON
    }
    return try WireObject(value, "body")
  }

  static func answer(_ value: JSONValue) -> HTTPResponse { NCMBService.json(value) }

  static let done = NCMBService.json(.object([:]))

  /// The engine's refusal on the wire; a system error says no more than NCMB's does.
  static func refusal(_ error: DatastoreError, step: Int? = nil) -> HTTPResponse {
    let ncmb = NCMBError(error)
    guard error.code != .systemError else {
      return HTTPResponse(status: ncmb.status, headers: NCMBService.jsonHeaders, body: ncmb.body)
    }
    var body = error.wire.objectValue ?? [:]
    body["error"] = .string(ncmb.message)
    if let step { body["step"] = .int(Int64(step)) }
    return HTTPResponse(
      status: ncmb.status, headers: NCMBService.jsonHeaders,
      body: JSONValue.object(body).jsonBytes())
  }
}
