import CMicroHTTPD
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Serves an `HTTPHandler` over HTTP or HTTPS with libmicrohttpd: one thread accepts, and each
/// connection's own thread calls the handler with each complete request on it (so none waits for
/// another connection's, however long that one runs). libmicrohttpd parses, keeps connections
/// alive, refuses what is over the limits and speaks TLS (GnuTLS); this type only sets it up and
/// stops it.
public final class HTTPServer: Sendable {
  /// What one server allows a client.
  public struct Limits: Sendable {
    /// Open connections at once, idle ones included; each has a thread of its own, which runs
    /// the handler for its requests (so none waits behind another connection's).
    public var connections: Int
    /// Open connections from one client address at once (0: only `connections`): one address
    /// cannot take them all.
    public var connectionsPerAddress: Int
    /// A connection silent this long is closed (a half-sent request too).
    public var idleTimeoutSeconds: Int
    /// A request's line and headers must all have come this long after its connection opened
    /// (TLS handshake included) or after the last answer on it, however they trickle (0: none).
    public var headerDeadlineSeconds: Int
    /// A request's body must all have come this long after its headers (0: none).
    public var bodyDeadlineSeconds: Int
    /// Memory for request bodies and their decoded parts across all connections, each byte
    /// counted twice (the transport's and the handler's copy): a request that would pass it is
    /// answered by the handler's `respondToBusy`, its body unread.
    public var bufferedBytes: Int
    /// Per connection: the request line and headers must fit (a bigger one is answered
    /// 431/414 and closed by libmicrohttpd).
    public var headerBytes: Int
    /// A body over this is not read: the handler's `respondToOversizedBody` answers it. The
    /// default holds a file at the board's 5 MiB limit sent in base64 with its object
    /// (`Wire.maximumBodyBytes`, the remote engine's uploads).
    public var bodyBytes: Int

    public init(
      connections: Int = 4096,
      connectionsPerAddress: Int = 128, idleTimeoutSeconds: Int = 30,
      headerDeadlineSeconds: Int = 10, bodyDeadlineSeconds: Int = 60,
      headerBytes: Int = 64 * 1024, bodyBytes: Int = 10 * 1024 * 1024,
      bufferedBytes: Int = 64 * 1024 * 1024
    ) {
      self.connections = connections
      self.connectionsPerAddress = connectionsPerAddress
      self.idleTimeoutSeconds = idleTimeoutSeconds
      self.headerDeadlineSeconds = headerDeadlineSeconds
      self.bodyDeadlineSeconds = bodyDeadlineSeconds
      self.bufferedBytes = bufferedBytes
      self.headerBytes = headerBytes
      self.bodyBytes = bodyBytes
    }
  }

  /// The certificate chain and private key, PEM, for HTTPS.
  public struct TLSIdentity: Sendable {
    public var certificatePEM: [UInt8]
    public var keyPEM: [UInt8]
    public init(certificatePEM: [UInt8], keyPEM: [UInt8]) {
      self.certificatePEM = certificatePEM
      self.keyPEM = keyPEM
    }
  }

  public let address: ListenAddress
  /// The port bound (the one the system chose when 0 was asked).
  public let port: Int
  public let usesTLS: Bool
  /// Unchecked: libmicrohttpd's daemon, whose calls are safe from any thread.
  nonisolated(unsafe) private let server: OpaquePointer
  private let box: HandlerBox
  /// Whether `stop` ran; held while it runs.
  private let stopped = Mutex(false)

  /// Binds `address` and starts serving `handler`.
  public init(
    address: ListenAddress, tls: TLSIdentity?, limits: Limits = Limits(), handler: HTTPHandler
  ) throws {
    self.address = address
    usesTLS = tls != nil
    var error: Int32 = 0
    let socket = forum_http_listen(address.numericHost, UInt32(address.port), &error)
    guard socket >= 0 else {
      throw error == EADDRINUSE
        ? HTTPServerError.addressInUse(address)
        : HTTPServerError.cannotListen(address, reason: String(cString: strerror(error)))
    }
    port = Int(forum_http_bound_port(socket))
    let connections = Self.raiseDescriptorLimit(toHold: limits.connections)
    let box = HandlerBox(handler)
    self.box = box
    var reason = [CChar](repeating: 0, count: 512)
    let started: OpaquePointer? = withOptionalCString(tls?.certificatePEM) { certificate in
      withOptionalCString(tls?.keyPEM) { key in
        var config = forum_http_config(
          listen_socket: socket, tls_certificate: certificate, tls_key: key,
          connection_limit: UInt32(connections),
          per_address_connection_limit: UInt32(clamping: max(0, limits.connectionsPerAddress)),
          idle_timeout_seconds: UInt32(max(1, limits.idleTimeoutSeconds)),
          header_deadline_seconds: UInt32(clamping: max(0, limits.headerDeadlineSeconds)),
          body_deadline_seconds: UInt32(clamping: max(0, limits.bodyDeadlineSeconds)),
          buffer_budget: max(0, limits.bufferedBytes),
          connection_memory: max(4096, limits.headerBytes), body_limit: max(0, limits.bodyBytes),
          respond: httpServerRespond, admit: httpServerAdmit,
          context: Unmanaged.passUnretained(box).toOpaque())
        return forum_http_start(&config, &reason, reason.count)
      }
    }
    guard let started else {
      let text = String(
        decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      throw tls != nil && !text.hasPrefix("lib")
        ? HTTPServerError.tlsRefused(reason: text)
        : HTTPServerError.libraryUnavailable(reason: text)
    }
    server = started
  }

  deinit {
    stop(graceSeconds: 0)
  }

  /// `http://HOST:PORT` or `https://…` (an IPv6 host in brackets).
  public var baseURL: String {
    (usesTLS ? "https://" : "http://") + address.urlHost + ":" + String(port)
  }

  /// Requests begun and not yet answered.
  public var requestsInFlight: Int { Int(forum_http_in_flight(server)) }

  /// Bytes held for request bodies across all connections now (`Limits.bufferedBytes`).
  public var bufferedBytes: Int { Int(forum_http_buffered(server)) }

  /// Stops accepting, lets the requests already received be answered (each closing its
  /// connection) for up to `graceSeconds`, then stops the threads: a handler still running is let
  /// finish, so no write is cut half-way. `hurry` is asked while waiting: true stops the wait.
  /// Idempotent.
  public func stop(graceSeconds: Double, hurry: () -> Bool = { false }) {
    stopped.withLock { stopped in
      guard !stopped else { return }
      stopped = true
      forum_http_quiesce(server)
      // What waits (a long-poll, an event stream) ends now, answered: not held to the grace.
      box.handler.serverStopping()
      var clock = timespec()
      clock_gettime(CLOCK_MONOTONIC, &clock)
      let deadline = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 + graceSeconds
      while forum_http_in_flight(server) > 0 {
        clock_gettime(CLOCK_MONOTONIC, &clock)
        if Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 >= deadline || hurry() { break }
        usleep(5_000)
      }
      forum_http_stop(server)
    }
  }

  /// Each connection is a descriptor: the soft limit (often 1,024) is raised toward the hard one.
  /// Returns the connections that fit.
  private static func raiseDescriptorLimit(toHold connections: Int) -> Int {
    let spare = 64
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return connections }
    let wanted = rlim_t(connections + spare)
    if limit.rlim_cur < wanted {
      limit.rlim_cur = min(wanted, limit.rlim_max)
      _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
      _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    return max(1, min(connections, Int(limit.rlim_cur) - spare))
  }
}

/// Why a server did not start.
public enum HTTPServerError: Error, Equatable, Sendable {
  case addressInUse(ListenAddress)
  case cannotListen(ListenAddress, reason: String)
  case tlsRefused(reason: String)
  case libraryUnavailable(reason: String)
}

/// What `--listen HOST:PORT` names: a numeric IPv4 address, an IPv6 address in brackets, or
/// `localhost` (127.0.0.1); the port 0–65535 (0: the system picks one).
public struct ListenAddress: Equatable, Sendable {
  /// As written (`localhost`, `127.0.0.1`, `::1`), without brackets.
  public var host: String
  public var port: Int

  public init(host: String, port: Int) {
    self.host = host
    self.port = port
  }

  /// nil when `text` is not `HOST:PORT` of that form.
  public init?(parsing text: String) {
    let host: Substring
    let portText: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]") else { return nil }
      host = text[text.index(after: text.startIndex)..<close]
      let rest = text[text.index(after: close)...]
      guard rest.hasPrefix(":") else { return nil }
      portText = rest.dropFirst()
      guard host.contains(":") else { return nil }
    } else {
      guard let colon = text.lastIndex(of: ":") else { return nil }
      host = text[..<colon]
      portText = text[text.index(after: colon)...]
      guard !host.contains(":") else { return nil }
    }
    guard !portText.isEmpty, portText.count <= 5,
      portText.allSatisfy({ $0.isASCII && $0.isNumber }),
      let port = Int(portText), port <= 65535
    else { return nil }
    let address = ListenAddress(host: String(host), port: port)
    guard address.isNumericOrLocalhost else { return nil }
    self = address
  }

  /// The address bound: `localhost` is 127.0.0.1.
  public var numericHost: String { host == "localhost" ? "127.0.0.1" : host }

  /// The host as a URL writes it.
  public var urlHost: String { host.contains(":") ? "[\(host)]" : host }

  private var isNumericOrLocalhost: Bool {
    if host == "localhost" { return true }
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
  }
}

/// Holds the handler for the C callback's context pointer.
private final class HandlerBox: Sendable {
  let handler: HTTPHandler
  init(_ handler: HTTPHandler) { self.handler = handler }
}

private func withOptionalCString<R>(
  _ bytes: [UInt8]?, _ body: (UnsafePointer<CChar>?) -> R
) -> R {
  guard let bytes else { return body(nil) }
  let text = bytes + [0]
  return text.withUnsafeBufferPointer { buffer in
    buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: text.count) { body($0) }
  }
}

private func text(_ pointer: UnsafePointer<CChar>, length: Int) -> String {
  pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
    String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
  }
}

private func bytes(_ pointer: UnsafePointer<UInt8>?, length: Int) -> [UInt8] {
  guard let pointer, length > 0 else { return [] }
  return Array(UnsafeBufferPointer(start: pointer, count: length))
}

/// A request as the C shim gathered it.
private func message(_ raw: forum_http_request) -> HTTPRequest {
  var headers: [(name: String, value: String)] = []
  headers.reserveCapacity(raw.header_count)
  for index in 0..<raw.header_count {
    let header = raw.headers![index]
    headers.append(
      (String(cString: header.name).lowercased(), text(header.value, length: header.value_length)))
  }
  var parts: [HTTPFormPart] = []
  for index in 0..<raw.part_count {
    let part = raw.parts![index]
    parts.append(
      HTTPFormPart(
        name: String(cString: part.name), fileName: part.file_name.map { String(cString: $0) },
        contentType: part.content_type.map { String(cString: $0) },
        bytes: bytes(part.bytes, length: part.length)))
  }
  var message = HTTPRequest(
    method: String(cString: raw.method), path: text(raw.path, length: raw.path_length),
    rawQuery: text(raw.query, length: raw.query_length), headers: headers,
    body: bytes(raw.body, length: raw.body_length), formParts: parts)
  message.formMalformed = raw.form_malformed != 0
  message.clientAddress = withUnsafeBytes(of: raw.client_address) { buffer in
    String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
  }
  let socket = raw.client_socket
  if socket >= 0 { message.clientGone = { clientHasHungUp(socket) } }
  return message
}

/// Hands `response` to the C shim for `exchange`.
private func answer(_ exchange: OpaquePointer, _ response: HTTPResponse) {
  var headerBytes: [UInt8] = []
  for (name, value) in response.headers {
    headerBytes += Array(name.utf8) + [0] + Array(value.utf8) + [0]
  }
  if let stream = response.stream {
    let context = Unmanaged.passRetained(StreamBox(stream)).toOpaque()
    let answered = headerBytes.withUnsafeBufferPointer { head in
      forum_http_answer_stream(
        exchange, UInt32(clamping: response.status), head.baseAddress, head.count,
        httpStreamRead, httpStreamFinished, context)
    }
    if answered != 0 {
      let failure = Array("the server could not answer".utf8)
      _ = failure.withUnsafeBufferPointer {
        forum_http_answer(exchange, 500, nil, 0, $0.baseAddress, $0.count)
      }
    }
    return
  }
  let answered = headerBytes.withUnsafeBufferPointer { head in
    response.body.withUnsafeBufferPointer { body in
      forum_http_answer(
        exchange, UInt32(clamping: response.status), head.baseAddress, head.count,
        body.baseAddress, body.count)
    }
  }
  if answered != 0 {
    // A header libmicrohttpd refused (CR or LF in it): the client gets a plain 500, not a
    // response split in two.
    let failure = Array("the server could not answer".utf8)
    _ = failure.withUnsafeBufferPointer {
      forum_http_answer(exchange, 500, nil, 0, $0.baseAddress, $0.count)
    }
  }
}

/// A streamed body and what of its last piece the transport has not taken yet.
private final class StreamBox {
  let stream: any HTTPBodyStream
  var pending: [UInt8] = []
  var sent = 0
  init(_ stream: any HTTPBodyStream) { self.stream = stream }
}

private let httpStreamRead: forum_http_stream_read = { context, buffer, capacity in
  let box = Unmanaged<StreamBox>.fromOpaque(context!).takeUnretainedValue()
  if box.sent == box.pending.count {
    guard let next = box.stream.next(), !next.isEmpty else { return -1 }
    box.pending = next
    box.sent = 0
  }
  let count = min(capacity, box.pending.count - box.sent)
  box.pending.withUnsafeBufferPointer {
    buffer.update(from: $0.baseAddress! + box.sent, count: count)
  }
  box.sent += count
  return count
}

private let httpStreamFinished: forum_http_stream_finished = { context in
  let box = Unmanaged<StreamBox>.fromOpaque(context!).takeRetainedValue()
  box.stream.finished()
}

/// The C shim's callback: one complete request in, one answer out, on its connection's thread.
private let httpServerRespond: forum_http_respond = { context, request, exchange in
  let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
  let raw = request.pointee
  let message = message(raw)
  // The copy is what the budget counts from here on.
  forum_http_copied(exchange)
  let response =
    raw.body_too_large != 0
    ? handler.respondToOversizedBody(message)
    : raw.server_busy != 0 ? handler.respondToBusy(message) : handler.respond(to: message)
  answer(exchange, response)
}

/// The C shim's head admission: the line and headers in, an answer out only to refuse.
private let httpServerAdmit: forum_http_admit = { context, request, exchange in
  let handler = Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler
  let raw = message(request.pointee)
  let head = HTTPRequestHead(
    method: raw.method, path: raw.path, rawQuery: raw.rawQuery, headers: raw.headers)
  if let refusal = handler.admit(head) { answer(exchange, refusal) }
}

/// True when the peer closed its side of `socket` (or it failed): it will read no answer. Only
/// looked at, never read from: libmicrohttpd owns the socket.
private func clientHasHungUp(_ socket: Int32) -> Bool {
  let peerClosed: Int16 = 0x2000  // POLLRDHUP (Linux; Glibc's module leaves it out)
  var descriptor = pollfd(fd: socket, events: peerClosed, revents: 0)
  guard poll(&descriptor, 1, 0) > 0 else { return false }
  return descriptor.revents & (peerClosed | Int16(POLLHUP | POLLERR | POLLNVAL)) != 0
}
