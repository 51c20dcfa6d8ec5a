import Foundation
import HTTPTestSupport
import NCMBServer
import Testing

/// Answers with what it was given, as JSON; `/slow` first waits, `/split` tries a header holding
/// CR LF.
final class EchoHandler: HTTPHandler, @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  var calls: Int { lock.withLock { count } }

  func respond(to request: HTTPRequest) -> HTTPResponse {
    lock.withLock { count += 1 }
    if request.path.hasPrefix("/slow") { usleep(1_500_000) }
    if request.path == "/split" {
      return HTTPResponse(status: 200, headers: [("x-a", "b\r\nSet-Cookie: evil=1")], body: [])
    }
    let echo: [String: Any] = [
      "method": request.method, "path": request.path, "query": request.rawQuery,
      "headers": request.headers.map { [$0.name, $0.value] },
      "body": String(decoding: request.body, as: UTF8.self),
      "bodyLength": request.body.count,
      "formMalformed": request.formMalformed,
      "parts": request.formParts.map { part -> [String: Any] in
        [
          "name": part.name, "fileName": part.fileName ?? NSNull(),
          "contentType": part.contentType ?? NSNull(), "length": part.bytes.count,
          "text": String(decoding: part.bytes.prefix(200), as: UTF8.self),
        ]
      },
    ]
    let body = (try? JSONSerialization.data(withJSONObject: echo)) ?? Data()
    return HTTPResponse(
      status: 200, headers: [("content-type", "application/json")], body: Array(body))
  }
}

/// A server on a free loopback port for one test.
final class EchoServer {
  let handler = EchoHandler()
  let server: HTTPServer
  let directory: TemporaryDirectory
  var url: String { server.baseURL }

  init(
    host: String = "127.0.0.1", tls: ThrowawayCertificate? = nil,
    limits: HTTPServer.Limits = .init()
  )
    throws
  {
    directory = try TemporaryDirectory()
    let identity = try tls.map {
      HTTPServer.TLSIdentity(
        certificatePEM: Array(try Data(contentsOf: URL(fileURLWithPath: $0.certificateFile))),
        keyPEM: Array(try Data(contentsOf: URL(fileURLWithPath: $0.keyFile))))
    }
    server = try HTTPServer(
      address: ListenAddress(host: host, port: 0), tls: identity, limits: limits, handler: handler)
  }

  func echo(_ run: ClientRun) throws -> [String: Any] {
    let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let body = lines.last.map(String.init) ?? ""
    guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
    else { throw ClientError("not an echo: \(run.summary)") }
    return object
  }
}

@Suite("HTTPServer (libmicrohttpd) through curl and Python")
struct HTTPServerTests {
  @Test func pathAndQueryAreHandedOverAsSent() throws {
    let echo = try EchoServer()
    let target = "/2013-09-01/classes/a%2Fb/?where=%7B%22a%22%3A%201%7D&limit=2+3"
    let run = try Clients.curl(["--path-as-is", echo.url + target, "-H", "X-NCMB-Timestamp: T"])
    let body = try echo.echo(run)
    #expect(body["method"] as? String == "GET")
    #expect(body["path"] as? String == "/2013-09-01/classes/a%2Fb/")
    #expect(body["query"] as? String == "where=%7B%22a%22%3A%201%7D&limit=2+3")
    let headers = body["headers"] as? [[String]] ?? []
    #expect(headers.contains(["x-ncmb-timestamp", "T"]), "\(headers)")
    #expect(headers.contains { $0.first == "host" }, "\(headers)")
  }

  @Test func jsonBodyAndMultipartParts() throws {
    let echo = try EchoServer()
    let json = try echo.echo(
      try Clients.curl([
        "-X", "POST", echo.url + "/2013-09-01/classes/Comment", "-H",
        "Content-Type: application/json", "--data-binary", #"{"text":"日本語"}"#,
      ]))
    #expect(json["body"] as? String == #"{"text":"日本語"}"#)
    #expect((json["parts"] as? [Any])?.isEmpty == true)

    let file = echo.directory.path + "/picture.png"
    let picture = Data([0x89, 0x50, 0x4E, 0x47] + [UInt8](repeating: 7, count: 300_000))
    try picture.write(to: URL(fileURLWithPath: file))
    let multipart = try echo.echo(
      try Clients.curl([
        "-X", "POST", echo.url + "/2013-09-01/files/picture.png", "-F", #"acl={"*":{"read":true}}"#,
        "-F", "file=@\(file);type=image/png",
      ]))
    let parts = multipart["parts"] as? [[String: Any]] ?? []
    #expect(parts.count == 2, "\(multipart)")
    #expect(parts.first?["name"] as? String == "acl")
    #expect(parts.first?["text"] as? String == #"{"*":{"read":true}}"#)
    #expect(parts.last?["name"] as? String == "file")
    #expect(parts.last?["fileName"] as? String == "picture.png")
    #expect(parts.last?["contentType"] as? String == "image/png")
    #expect(parts.last?["length"] as? Int == picture.count)
    #expect(multipart["formMalformed"] as? Bool == false)
  }

  @Test func aMultipartBodyCutShortIsSaidToBeMalformed() throws {
    let echo = try EchoServer()
    let body =
      "--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n\r\nabc"
    let run = try Clients.curl([
      "-X", "POST", echo.url + "/files/a.png", "-H",
      "Content-Type: multipart/form-data; boundary=XYZ",
      "--data-binary", body,
    ])
    let answer = try echo.echo(run)
    #expect(answer["formMalformed"] as? Bool == true, "\(answer)")
    #expect((answer["parts"] as? [Any])?.isEmpty == true)
  }

  /// Over the limit by its Content-Length (with or without waiting for "100 Continue"), or as a
  /// chunked body grows: E413002 with 413, the handler's `respond` never called, and the server
  /// still answers the next client.
  @Test func aBodyOverTheLimitIsAnswered413() throws {
    let echo = try EchoServer(limits: HTTPServer.Limits(bodyBytes: 100_000))
    let file = echo.directory.path + "/big"
    try Data(repeating: 65, count: 150_000).write(to: URL(fileURLWithPath: file))
    for header in ["Expect:", "Expect: 100-continue", "Transfer-Encoding: chunked"] {
      let run = try Clients.curl([
        "-X", "POST", echo.url + "/2013-09-01/classes/Comment", "-H",
        "Content-Type: application/json",
        "--data-binary", "@" + file, "-w", "\n%{http_code}", "-H", header,
      ])
      let lines = run.stdout.split(separator: "\n").map(String.init)
      #expect(lines.last == "413", "\(header): \(run.summary)")
      #expect(lines.first == #"{"code":"E413002","error":"Request entity is too large."}"#)
    }
    #expect(echo.handler.calls == 0)
    let next = try Clients.curl([echo.url + "/classes/Thread", "-w", "\n%{http_code}"])
    #expect(next.stdout.hasSuffix("\n200"), "\(next.summary)")
  }

  @Test func aHeaderOfOneMegabyteIsRefusedAndOthersAreServed() throws {
    let echo = try EchoServer()
    let run = try Clients.python(
      """
      import http.client, sys
      c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)
      c.putrequest('GET', '/classes/Thread')
      c.putheader('X-Big', 'a' * 1000000)
      try:
          c.endheaders()
          r = c.getresponse()
          print(r.status)
      except (BrokenPipeError, ConnectionResetError):
          print('reset')
      """, [String(echo.server.port)])
    // libmicrohttpd answers 431 (or resets while the rest is still being sent).
    #expect(
      ["431", "reset"].contains(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
      "\(run.summary)")
    #expect(echo.handler.calls == 0)
    let next = try Clients.curl([echo.url + "/classes/Thread", "-w", "\n%{http_code}"])
    #expect(next.stdout.hasSuffix("\n200"), "\(next.summary)")
  }

  @Test func keepAliveServesManyRequestsOnOneConnection() throws {
    let echo = try EchoServer()
    let run = try Clients.python(
      """
      import http.client, sys
      c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)
      ports = set()
      for i in range(20):
          c.request('GET', '/classes/Thread?i=%d' % i)
          r = c.getresponse()
          r.read()
          assert r.status == 200, r.status
          ports.add(c.sock.getsockname()[1])
      print(len(ports))
      """, [String(echo.server.port)])
    #expect(run.stdout == "1\n", "\(run.summary)")
    #expect(echo.handler.calls == 20)
  }

  @Test func aHeaderHoldingALineBreakIsNotSent() throws {
    let echo = try EchoServer()
    let run = try Clients.curl(["-i", echo.url + "/split"])
    #expect(run.stdout.hasPrefix("HTTP/1.1 500"), "\(run.summary)")
    #expect(!run.stdout.contains("evil"))
  }

  @Test func servesTLS() throws {
    let directory = try TemporaryDirectory()
    let certificate = try ThrowawayCertificate(in: directory.path)
    let echo = try EchoServer(tls: certificate)
    #expect(echo.url.hasPrefix("https://127.0.0.1:"))
    let run = try Clients.curl([
      "--cacert", certificate.certificateFile, echo.url + "/classes/Thread",
    ])
    #expect(try echo.echo(run)["path"] as? String == "/classes/Thread")
    // Plain HTTP to the TLS port gets no answer of the handler's.
    let plain = try Clients.curl(["http://127.0.0.1:\(echo.server.port)/classes/Thread"])
    #expect(plain.status != 0 || !plain.stdout.contains("classes"), "\(plain.summary)")
    #expect(echo.handler.calls == 1)
  }

  @Test func listensOnIPv6() throws {
    let echo = try EchoServer(host: "::1")
    #expect(echo.url.hasPrefix("http://[::1]:"))
    let run = try Clients.curl(["-g", echo.url + "/classes/Thread"])
    #expect(try echo.echo(run)["path"] as? String == "/classes/Thread")
  }

  @Test func aPortInUseIsSaid() throws {
    let echo = try EchoServer()
    let address = ListenAddress(host: "127.0.0.1", port: echo.server.port)
    #expect(throws: HTTPServerError.addressInUse(address)) {
      _ = try HTTPServer(address: address, tls: nil, handler: EchoHandler())
    }
  }

  @Test func aBadCertificateIsRefused() throws {
    let directory = try TemporaryDirectory()
    let certificate = try ThrowawayCertificate(in: directory.path)
    let other = try TemporaryDirectory()
    let otherCertificate = try ThrowawayCertificate(in: other.path)
    let pem = { (path: String) in Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    // A key that is not the certificate's, and text that is no PEM at all.
    for identity in [
      HTTPServer.TLSIdentity(
        certificatePEM: try pem(certificate.certificateFile),
        keyPEM: try pem(otherCertificate.keyFile)),
      HTTPServer.TLSIdentity(certificatePEM: Array("hello".utf8), keyPEM: Array("world".utf8)),
    ] {
      do {
        _ = try HTTPServer(
          address: ListenAddress(host: "127.0.0.1", port: 0), tls: identity, handler: EchoHandler())
        Issue.record("a server started with a certificate it cannot use")
      } catch HTTPServerError.tlsRefused(let reason) {
        #expect(!reason.isEmpty)
      }
    }
  }

  /// A server that cannot start closes only what is its own: another thread's descriptors,
  /// opened while it fails (the lowest free number is the one its socket just had), stay open.
  /// (It closed its socket's number again after libmicrohttpd had, and so, at times, another
  /// test's pipe: CI's test process crashed reading that pipe as a socket, ENOTCONN.)
  @Test func aServerThatCannotStartClosesNothingOfAnotherThread() throws {
    final class Racer: @unchecked Sendable {
      let lock = NSLock()
      var stop = false
      var lost = 0
      var rounds = 0
    }
    let racer = Racer()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      defer { done.signal() }
      while racer.lock.withLock({ !racer.stop }) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { continue }
        var byte: UInt8 = 7
        let wrote = write(ends[1], &byte, 1)
        byte = 0
        let read = Glibc.read(ends[0], &byte, 1)
        if wrote != 1 || read != 1 || byte != 7 {
          // Closed under us: not closed again, its numbers may be another's by now.
          racer.lock.withLock { racer.lost += 1 }
        } else {
          close(ends[0])
          close(ends[1])
        }
        racer.lock.withLock { racer.rounds += 1 }
      }
    }
    let identity = HTTPServer.TLSIdentity(
      certificatePEM: Array("hello".utf8), keyPEM: Array("world".utf8))
    for _ in 0..<300 {
      #expect(throws: HTTPServerError.self) {
        _ = try HTTPServer(
          address: ListenAddress(host: "127.0.0.1", port: 0), tls: identity, handler: EchoHandler())
      }
    }
    racer.lock.withLock { racer.stop = true }
    done.wait()
    let (lost, rounds) = racer.lock.withLock { (racer.lost, racer.rounds) }
    #expect(rounds > 300)
    #expect(lost == 0, "\(lost) of the other thread's pipes closed under it in \(rounds) rounds")
  }

  @Test func listenAddresses() {
    #expect(
      ListenAddress(parsing: "127.0.0.1:8443") == ListenAddress(host: "127.0.0.1", port: 8443))
    #expect(ListenAddress(parsing: "[::1]:0") == ListenAddress(host: "::1", port: 0))
    #expect(ListenAddress(parsing: "localhost:80")?.numericHost == "127.0.0.1")
    #expect(ListenAddress(parsing: "[::]:8080")?.urlHost == "[::]")
    for bad in [
      "", "8443", ":8443", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
      "127.0.0.1:80a", "::1:8443", "[::1]8443", "[127.0.0.1]:80", "example.com:80",
      "256.1.1.1:80", "127.0.0.1:٣٣", "[::1:80",
    ] {
      #expect(ListenAddress(parsing: bad) == nil, "\(bad)")
    }
  }

  /// A stop lets a request already being answered finish (with Connection: close), and takes no
  /// new connection.
  @Test func stopLetsARequestInFlightFinish() throws {
    let echo = try EchoServer()
    let port = echo.server.port
    let finished = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var slow: ClientRun?
    let url = echo.url
    DispatchQueue.global().async {
      slow = try? Clients.curl(["-i", url + "/slow"])
      finished.signal()
    }
    var waited = 0
    while echo.server.requestsInFlight == 0 && waited < 500 {
      usleep(10_000)
      waited += 1
    }
    #expect(echo.server.requestsInFlight == 1)
    echo.server.stop(graceSeconds: 10)
    finished.wait()
    let answer = slow?.stdout ?? ""
    #expect(answer.hasPrefix("HTTP/1.1 200"), "\(slow?.summary ?? "no run")")
    #expect(answer.lowercased().contains("connection: close"))
    let after = try Clients.curl(["http://127.0.0.1:\(port)/classes/Thread"])
    #expect(after.status != 0, "\(after.summary)")
  }

  /// A client that sends half its body and goes: the handler is never called, and the request is
  /// no longer counted in flight (at once as a rule; libmicrohttpd sometimes notices the close only
  /// at the idle timeout, here 3 s).
  @Test func aClientGoneMidUploadChangesNothing() throws {
    let echo = try EchoServer(limits: HTTPServer.Limits(idleTimeoutSeconds: 3))
    let run = try Clients.python(
      """
      import socket, sys
      s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
      s.sendall(b'POST /2013-09-01/files/a.png HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: '
                b'multipart/form-data; boundary=B\\r\\nContent-Length: 5000000\\r\\n\\r\\n'
                b'--B\\r\\nContent-Disposition: form-data; name="file"; filename="a.png"\\r\\n\\r\\n'
                + b'x' * 1000000)
      s.close()
      print('gone')
      """, [String(echo.server.port)])
    #expect(run.stdout == "gone\n", "\(run.summary)")
    var waited = 0
    while echo.server.requestsInFlight > 0 && waited < 1000 {
      usleep(10_000)
      waited += 1
    }
    #expect(echo.server.requestsInFlight == 0, "waited \(waited)")
    #expect(echo.handler.calls == 0)
  }

  /// Bodies held across all connections stay within `bufferedBytes`: with room for one 300 kB body
  /// (counted twice, with its copy; held while its handler takes 1.5 s), eight sent at once are each served or answered 503 (the
  /// handler's `respondToBusy`, E503001), and nothing stays held after (before: every body was).
  @Test func bodiesHeldAcrossConnectionsStayWithinTheBudget() throws {
    let echo = try EchoServer(limits: HTTPServer.Limits(bufferedBytes: 800_000))
    let run = try Clients.python(
      """
      import http.client, sys, threading
      answers = []
      def send():
          c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=30)
          try:
              c.request('POST', '/slow', b'x' * 300000, {'Expect': '100-continue'})
              r = c.getresponse()
              answers.append((r.status, r.read()[:60].decode()))
          except OSError as error:
              answers.append((0, type(error).__name__))
      threads = [threading.Thread(target=send) for _ in range(8)]
      for t in threads: t.start()
      for t in threads: t.join()
      for status, body in sorted(set(answers)): print(status, body)
      """, [String(echo.server.port)])
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.contains { $0.hasPrefix("200 ") }, "\(run.summary)")
    #expect(lines.contains { $0.hasPrefix("503 ") }, "\(run.summary)")
    #expect(
      lines.allSatisfy {
        $0.hasPrefix("200 ") || $0 == #"503 {"code":"E503001","error":"Service unavailable."}"#
      }, "\(run.summary)")
    #expect(echo.server.bufferedBytes == 0)
  }

  /// A handler's head admission refuses a request before a byte of its body is read: the answer
  /// comes though the body is never sent, and `respond` is never called.
  @Test func anAdmissionRefusesBeforeTheBody() throws {
    final class Refusing: HTTPHandler, @unchecked Sendable {
      func admit(_ head: HTTPRequestHead) -> HTTPResponse? {
        head.header("X-Key") == "yes" ? nil : HTTPResponse(status: 401, body: Array("no".utf8))
      }
      func respond(to request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: 200, body: Array("read \(request.body.count)".utf8))
      }
    }
    let server = try HTTPServer(
      address: ListenAddress(host: "127.0.0.1", port: 0), tls: nil, handler: Refusing())
    let run = try Clients.python(
      """
      import socket, sys
      def ask(key, body):
          s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
          s.settimeout(10)
          s.sendall(b'POST /x HTTP/1.1\\r\\nHost: h\\r\\nX-Key: ' + key
                    + b'\\r\\nContent-Length: 5\\r\\n\\r\\n' + body)
          try:
              answer = s.recv(4096)
          except socket.timeout:
              answer = b'no answer'
          print(answer.split(b'\\r\\n')[0].decode(), answer.split(b'\\r\\n\\r\\n')[-1].decode())
      ask(b'no', b'')
      ask(b'yes', b'abcde')
      """, [String(server.port)])
    #expect(
      run.stdout == "HTTP/1.1 401 Unauthorized no\nHTTP/1.1 200 OK read 5\n", "\(run.summary)")
  }
}
