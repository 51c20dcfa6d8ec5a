@_spi(Server) import Datastore

/// `POST batch`: NCMB's `{"requests":[{"method","path","body"}…]}` (the iOS SDK's `saveAll`).
/// Each request is served as the caller, by the objects' own controller, in its own savepoint,
/// and answered on its own, in order: `{"success":{…}}` or `{"error":{"code","error"}}`; one
/// refused leaves the others written.
struct BatchController: NCMBController {
  /// Requests one batch may hold.
  static let maximumRequests = 50

  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard call.method == "POST" else { throw NCMBError.method }
    let fields = try NCMBJSON.object(call.request.body)
    guard case .array(let requests)? = fields["requests"] else {
      throw NCMBError.empty("requests")
    }
    guard !requests.isEmpty, requests.count <= BatchController.maximumRequests else {
      throw NCMBError.invalid(
        "requests", "between 1 and \(BatchController.maximumRequests) requests")
    }
    var answers: [JSONValue] = []
    for item in requests {
      do {
        let response = try call.store.atomically { try serve(item, call) }
        let body = (try? NCMBJSON.parse(response.body)) ?? .object([:])
        answers.append(.object(["success": body]))
      } catch {
        let refusal: NCMBError =
          switch error {
          case let error as NCMBError: error
          case let error as DatastoreError: NCMBError(error)
          default: .system
          }
        answers.append(.object(["error": (try? NCMBJSON.parse(refusal.body)) ?? .object([:])]))
      }
    }
    return NCMBService.json(.array(answers))
  }

  /// One request of the batch: an object's create, read, update or delete
  /// (`/2013-09-01/classes/…`, the version prefix optional), as the batch's caller.
  private func serve(_ item: JSONValue, _ call: NCMBCall) throws -> HTTPResponse {
    guard case .object(let request) = item, case .string(let method)? = request["method"],
      ["GET", "POST", "PUT", "DELETE"].contains(method), case .string(var path)? = request["path"]
    else { throw NCMBError.invalid("requests", "each takes a method and a path") }
    if !path.hasPrefix("/") { path = "/" + path }
    if !path.hasPrefix(NCMBRoute.prefix) { path = NCMBRoute.prefix + path.dropFirst() }
    let route = try NCMBRoute(path: path)
    guard route.resource == .classes else {
      throw NCMBError.invalid("requests", "a batch holds objects' requests")
    }
    var body: [UInt8] = []
    if let given = request["body"] {
      guard case .object = given else { throw NCMBError.invalid("body") }
      body = given.jsonBytes()
    }
    var inner = HTTPRequest(
      method: method, path: path, headers: call.request.headers, body: body)
    inner.clientAddress = call.request.clientAddress
    let itemCall = NCMBCall(
      request: inner, route: route, store: call.store, client: call.client, policy: call.policy,
      limits: call.limits)
    // A read in a batch costs the reader's bytes a minute as the same GET alone would: fifty
    // of them are not fifty budgets.
    let reader = call.rates?.reader(inner, user: call.client.userId)
    return try call.rates?.charged(reader) { try ObjectsController().respond(to: itemCall) }
      ?? ObjectsController().respond(to: itemCall)
  }
}
