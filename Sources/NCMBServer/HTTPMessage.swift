/// One HTTP request as the transport (`HTTPServer`, libmicrohttpd) hands it to a handler: what the
/// client sent, before any NCMB meaning is given to it. The transport parses; handlers never see a
/// socket.
public struct HTTPRequest: Sendable {
  /// `GET`, `POST`, `PUT`, `DELETE`, … as sent.
  public var method: String
  /// The path exactly as the client sent it, still percent-encoded, without the query
  /// (`/2013-09-01/classes/Thread/`). The NCMB signature is checked against these bytes.
  public var path: String
  /// The query string exactly as sent, without the `?` (empty when there is none).
  public var rawQuery: String
  /// Header names lowercased, values as sent, in the order received.
  public var headers: [(name: String, value: String)]
  /// The body as received (at most the transport's body limit).
  public var body: [UInt8]
  /// For `multipart/form-data` bodies: the parts, decoded by the transport's post processor.
  public var formParts: [HTTPFormPart]
  /// A `multipart/form-data` body the post processor could not decode (no boundary, cut short):
  /// `formParts` is then empty, `body` still holds the bytes.
  public var formMalformed = false
  /// The client's numeric address (no port), "" when unknown (in-process tests): rate limits
  /// count by it.
  public var clientAddress = ""
  /// True once the client has hung up (nil: cannot tell): a request still running is stopped.
  public var clientGone: (@Sendable () -> Bool)?

  public init(
    method: String, path: String, rawQuery: String = "",
    headers: [(name: String, value: String)] = [], body: [UInt8] = [],
    formParts: [HTTPFormPart] = []
  ) {
    self.method = method
    self.path = path
    self.rawQuery = rawQuery
    self.headers = headers
    self.body = body
    self.formParts = formParts
  }

  /// The first header called `name` (any case), or nil.
  public func header(_ name: String) -> String? {
    header(lowercased: name.lowercased())
  }

  /// The first header called `name`, given in lower case (names are kept lowercased).
  func header(lowercased name: String) -> String? {
    headers.first { $0.name == name }?.value
  }
}

/// What a request says before its body: the transport hands it to `HTTPHandler.admit` once the
/// line and headers are in, before it reads a byte of the body.
public struct HTTPRequestHead: Sendable {
  /// `GET`, `POST`, `PUT`, `DELETE`, … as sent.
  public var method: String
  /// As in `HTTPRequest.path`: percent-encoded, without the query.
  public var path: String
  /// The query string exactly as sent, without the `?`.
  public var rawQuery: String
  /// Header names lowercased, values as sent, in the order received.
  public var headers: [(name: String, value: String)]

  public init(
    method: String, path: String, rawQuery: String = "",
    headers: [(name: String, value: String)] = []
  ) {
    self.method = method
    self.path = path
    self.rawQuery = rawQuery
    self.headers = headers
  }

  /// The first header called `name` (any case), or nil.
  public func header(_ name: String) -> String? {
    let name = name.lowercased()
    return headers.first { $0.name == name }?.value
  }
}

extension HTTPRequest {
  /// A request of `head` with no body yet.
  public init(_ head: HTTPRequestHead) {
    self.init(method: head.method, path: head.path, rawQuery: head.rawQuery, headers: head.headers)
  }
}

/// One part of a `multipart/form-data` body.
public struct HTTPFormPart: Sendable {
  /// The part's `name` (`acl`, `file`).
  public var name: String
  /// The part's `filename`, when it has one.
  public var fileName: String?
  /// The part's `Content-Type`, when it has one.
  public var contentType: String?
  public var bytes: [UInt8]

  public init(name: String, fileName: String? = nil, contentType: String? = nil, bytes: [UInt8]) {
    self.name = name
    self.fileName = fileName
    self.contentType = contentType
    self.bytes = bytes
  }
}

/// What a handler answers.
public struct HTTPResponse: Sendable {
  public var status: Int
  public var headers: [(name: String, value: String)]
  public var body: [UInt8]
  /// A body of unknown length sent as it comes (chunked), in place of `body`: server-sent events.
  public var stream: (any HTTPBodyStream)?

  public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}

/// A response body sent piece by piece. The transport asks for the next piece on the
/// connection's own thread, which it may block (that thread serves no other connection).
public protocol HTTPBodyStream: AnyObject, Sendable {
  /// The next bytes to send (not empty), or nil to end the body.
  func next() -> [UInt8]?
  /// The transport is done with the stream (ended, or the client gone): never asked again.
  func finished()
}

/// Answers requests. Called from the transport's worker threads, several at once.
public protocol HTTPHandler: AnyObject, Sendable {
  /// Called once the line and headers of a request that announces a body (a Content-Length above
  /// 0, or a Transfer-Encoding) are in, before a byte of the body is read or `100 Continue` is
  /// sent. nil lets the request in (`respond` answers it once its body has come); an answer
  /// refuses it: it is sent at once, the body is never read and the connection closes after it.
  /// By default every request is let in.
  func admit(_ head: HTTPRequestHead) -> HTTPResponse?
  func respond(to request: HTTPRequest) -> HTTPResponse
  /// Called instead of `respond` for a request whose body is over the transport's limit
  /// (`HTTPServer.Limits.bodyBytes`, by its Content-Length or as it arrived): `body` and
  /// `formParts` are empty, the rest of the body is never read and the connection closes after
  /// the answer. By default NCMB's E413002 with HTTP 413.
  func respondToOversizedBody(_ request: HTTPRequest) -> HTTPResponse
  /// Called instead of `respond` for a request whose body would pass what the transport holds
  /// for all connections at once (`HTTPServer.Limits.bufferedBytes`): as for an oversized body,
  /// nothing of it is kept and the connection closes. By default NCMB's E503001 with HTTP 503.
  func respondToBusy(_ request: HTTPRequest) -> HTTPResponse
  /// The server stops accepting and is about to wait for the requests it has: whatever waits
  /// (a long-poll, a stream) is to end now. By default nothing waits.
  func serverStopping()
}

extension HTTPHandler {
  public func admit(_ head: HTTPRequestHead) -> HTTPResponse? { nil }

  public func serverStopping() {}

  public func respondToBusy(_ request: HTTPRequest) -> HTTPResponse {
    let body = #"{"code":"E503001","error":"Service unavailable."}"#
    return HTTPResponse(
      status: 503, headers: [("content-type", "application/json"), ("retry-after", "1")],
      body: Array(body.utf8))
  }

  public func respondToOversizedBody(_ request: HTTPRequest) -> HTTPResponse {
    let body = #"{"code":"E413002","error":"Request entity is too large."}"#
    return HTTPResponse(
      status: 413, headers: [("content-type", "application/json")], body: Array(body.utf8))
  }
}
