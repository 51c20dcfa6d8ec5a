import CCurl

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// HTTPS requests by libcurl (`CCurl`, opened on the first request): the server's certificate
/// verified against the system's authorities, or `FORUM_CA_FILE`'s; every request with a
/// connect and a total time limit and a bounded answer; Ctrl-C (`Interrupt`) stops a wait.
/// Each failure is one `DatastoreError` a person can act on, naming the server.
struct HTTPSClient {
  /// The authorities' PEM file; nil: the system's.
  var caFile: String?
  var connectSeconds = 10.0
  var timeoutSeconds = 30.0
  /// The largest answer taken: a page of objects at the engine's answer budget, or a file.
  var maximumResponseBytes = 24 << 20

  struct Response {
    let status: Int
    let body: [UInt8]
  }

  /// The server's name for messages (`host:port`).
  let server: String

  func send(
    _ method: String, _ url: String, headers: [String], body: [UInt8] = [],
    timeoutSeconds: Double? = nil
  ) throws -> Response {
    var reason = [CChar](repeating: 0, count: 512)
    var response = ForumHTTPResponse()
    let outcome: Int32 = try withCStrings(headers) { headerPointers in
      try body.withUnsafeBufferPointer { bodyBytes in
        try method.withCString { methodText in
          try url.withCString { urlText in
            try withOptionalCString(caFile) { caText in
              var request = ForumHTTPRequest()
              request.method = methodText
              request.url = urlText
              request.headers = headerPointers
              request.headerCount = Int32(headers.count)
              request.body = bodyBytes.baseAddress
              request.bodyLength = body.count
              request.caFile = caText
              request.connectTimeoutMilliseconds = Int(connectSeconds * 1000)
              request.timeoutMilliseconds = Int((timeoutSeconds ?? self.timeoutSeconds) * 1000)
              request.maximumResponseBytes = maximumResponseBytes
              request.interrupted = { Interrupt.requested ? 1 : 0 }
              return forum_http_perform(&request, &response, &reason, UInt(reason.count))
            }
          }
        }
      }
    }
    defer { forum_http_free(&response) }
    HTTPSClient.log(method, url, outcome == FORUM_HTTP_OK ? response.status : -1)
    let words = Wire.printable(String(cString: reason), limit: 200)
    switch Int(outcome) {
    case Int(FORUM_HTTP_OK):
      let bytes =
        response.body.map { Array(UnsafeBufferPointer(start: $0, count: response.length)) } ?? []
      return Response(status: response.status, body: bytes)
    case Int(FORUM_HTTP_INTERRUPTED): throw Interrupted()
    case Int(FORUM_HTTP_TOO_LARGE):
      throw access(.remoteAnswerTooLarge(server: server, megabytes: maximumResponseBytes >> 20))
    case Int(FORUM_HTTP_NO_LIBRARY): throw access(.libcurlMissing(error: words))
    case Int(FORUM_HTTP_TIMED_OUT): throw access(.remoteTimedOut(server: server))
    case Int(FORUM_HTTP_CERTIFICATE):
      throw access(.remoteCertificate(server: server, error: words))
    default: throw access(.remoteUnreachable(server: server, error: words))
    }
  }

  /// `FORUM_TEST_REQUEST_LOG`: a file each request is appended to as `METHOD URL STATUS`, so
  /// that tests and benchmarks count what a command asks the server (-1: no answer).
  private static let requestLog: Int32? = {
    guard let path = getenv("FORUM_TEST_REQUEST_LOG"), path[0] != 0 else { return nil }
    let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
    return descriptor >= 0 ? descriptor : nil
  }()

  private static func log(_ method: String, _ url: String, _ status: Int) {
    guard let descriptor = requestLog else { return }
    let line = Array("\(method) \(url) \(status)\n".utf8)
    _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
  }

  private func access(_ reason: BoardAccessReason) -> DatastoreError {
    DatastoreError(.systemError, reason: reason)
  }

  /// The server answered, but not as a board does.
  func failure(_ words: String) -> DatastoreError {
    access(.remoteMalformed(server: server, what: words))
  }

}

private func withOptionalCString<T>(
  _ text: String?, _ body: (UnsafePointer<CChar>?) throws -> T
) rethrows -> T {
  guard let text else { return try body(nil) }
  return try text.withCString { try body($0) }
}

private func withCStrings<T>(
  _ texts: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws -> T
) rethrows -> T {
  let copies = texts.map { strdup($0) }
  defer { for copy in copies { free(copy) } }
  let pointers = copies.map { UnsafePointer<CChar>($0) }
  return try pointers.withUnsafeBufferPointer { try body($0.baseAddress) }
}

/// The https transport's start, for the program: `prepare` when a command is about to open an
/// https board (libcurl and TLS open on a thread of their own meanwhile), `settle` before exit.
public enum RemoteTransport {
  public static func prepare() { forum_http_prepare() }
  public static func settle() { forum_http_settle() }
}
