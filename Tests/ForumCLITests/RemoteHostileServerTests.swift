import Foundation
import HTTPTestSupport
import Spawning
import Testing

/// A hostile or broken server behind `--db https://…`: a tiny fake server (the system Python,
/// TLS with a throwaway authority) gives forum the keys it asks for first, then answers every
/// other request badly. forum says one line, exits 1, holds bounded memory, and nothing the
/// server sent acts on the terminal.
@Suite("remote board: a hostile server")
struct RemoteHostileServerTests {
  static let script = #"""
    import json, os, socket, ssl, sys, threading
    mode, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(16)
    print(listener.getsockname()[1], flush=True)
    ESC = '\x1b]0;owned\x07\x1b[2J\x1b[31m\u202e\x9b'

    def head(status, length=None, extra=''):
        text = 'HTTP/1.1 %s\r\nContent-Type: application/json\r\n' % status
        if length is not None: text += 'Content-Length: %d\r\n' % length
        return (text + extra + '\r\n').encode()

    def answer(connection, path):
        if path.startswith('/2013-09-01/forum/keys'):
            body = json.dumps({'applicationKey': 'a' * 64, 'clientKey': 'b' * 64,
                               'boardId': 'hostileboard0001'}).encode()
            connection.sendall(head('200 OK', len(body)) + body)
            return True
        if mode == 'huge':
            connection.sendall(head('200 OK', 200 << 20))
            chunk = b' ' * 65536
            for _ in range(3200): connection.sendall(chunk)
        elif mode == 'endless':
            connection.sendall(head('200 OK', None, 'Transfer-Encoding: chunked\r\n'))
            chunk = b'10000\r\n' + b'[' * 65536 + b'\r\n'
            while True: connection.sendall(chunk)
        elif mode == 'deep':
            body = b'[' * 200000 + b']' * 200000
            connection.sendall(head('200 OK', len(body)) + body)
        elif mode == 'types':
            body = json.dumps({'sessionToken': 12, 'objectId': ['x'], 'results': 'no'}).encode()
            connection.sendall(head('200 OK', len(body)) + body)
        elif mode == 'escapes':
            body = json.dumps({'code': 'E404001', 'error': ESC, 'field': ESC, 'detail': ESC * 50},
                              ensure_ascii=False).encode()
            connection.sendall(head('404 Not Found', len(body)) + body)
        elif mode == 'token':
            body = json.dumps({'sessionToken': ESC, 'objectId': 'abcdefghijklmnop'},
                              ensure_ascii=False).encode()
            connection.sendall(head('201 Created', len(body)) + body)
        elif mode == 'cut':
            connection.sendall(head('200 OK', 100000) + b'{"results":[{"className":"Thread"')
            return False
        elif mode in ('unknownReason', 'escapedReason'):
            # A refusal whose reason is no case of this forum's catalogue, or a known case
            # carrying escapes: a generic sentence, sanitized.
            reason = ({'board': {'fromTheFuture': {'x': ESC}}} if mode == 'unknownReason'
                      else {'board': {'onlyAuthorMayDelete': {'author': ESC, 'label': ESC}}})
            body = json.dumps({'code': 'E403001', 'error': 'No access with ACL.', 'detail': ESC,
                               'reason': reason}, ensure_ascii=False).encode()
            connection.sendall(head('403 Forbidden', len(body)) + body)
        elif mode in ('zstd', 'br', 'gzip'):
            # A compressed answer nobody asked for: forum's libcurl has no zstd or brotli
            # decoder (their stubs would stop the program) and inflates nothing.
            body = {'zstd': b'\x28\xb5\x2f\xfd', 'br': b'\x0b\x02\x80', 'gzip': b'\x1f\x8b\x08'}[mode]
            body += os.urandom(64)
            connection.sendall(head('200 OK', len(body), 'Content-Encoding: %s\r\n' % mode) + body)
        elif mode == 'html':
            body = ('<html>' + ESC + '</html>').encode()
            connection.sendall(head('502 Bad Gateway', len(body)) + body)
        return True

    def serve(raw):
        try:
            connection = context.wrap_socket(raw, server_side=True)
            data = b''
            while True:
                while b'\r\n\r\n' not in data:
                    more = connection.recv(65536)
                    if not more: return
                    data += more
                header, data = data.split(b'\r\n\r\n', 1)
                lines = header.decode('latin-1').split('\r\n')
                length = 0
                for line in lines[1:]:
                    name, _, value = line.partition(':')
                    if name.strip().lower() == 'content-length': length = int(value)
                while len(data) < length:
                    more = connection.recv(65536)
                    if not more: return
                    data += more
                data = data[length:]
                if not answer(connection, lines[0].split(' ')[1]): break
            connection.close()
        except Exception:
            pass

    while True:
        raw, _ = listener.accept()
        threading.Thread(target=serve, args=(raw,), daemon=True).start()
    """#

  /// The fake server in `mode`, until the returned process is terminated.
  private func fakeServer(_ mode: String, _ forum: ForumFixture, _ authority: ThrowawayAuthority)
    throws -> (ChildProcess, Int)
  {
    try RemoteHostileServerTests.python(
      RemoteHostileServerTests.script, at: forum.root + "/fake-server.py",
      [mode, authority.certificateFile, authority.keyFile])
  }

  /// Runs `script` (saved at `path`) with `arguments` under the system Python; the port it
  /// prints first, and the process, to terminate.
  static func python(_ script: String, at path: String, _ arguments: [String]) throws
    -> (ChildProcess, Int)
  {
    try Data(script.utf8).write(to: URL(fileURLWithPath: path))
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [path] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let line = output.fileHandleForReading.firstLine()
    guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
      process.terminate()
      throw ForumTestError("\(path) printed no port: \(line)")
    }
    return (process, port)
  }

  @Test(arguments: [
    "huge", "endless", "deep", "types", "escapes", "token", "cut", "html", "unknownReason",
    "escapedReason", "zstd", "br", "gzip",
  ])
  func oneLineBoundedMemoryNothingUnsanitized(mode: String) throws {
    let forum = try ForumFixture()
    let authority = try ThrowawayAuthority(in: forum.root)
    let (server, port) = try fakeServer(mode, forum, authority)
    defer {
      // SIGKILL: the test process's children may inherit SIGTERM blocked.
      kill(server.processIdentifier, SIGKILL)
      server.waitUntilExit()
    }
    let rss = forum.root + "/rss"
    // /usr/bin/time writes the most memory the command held (kilobytes) to its own file.
    let run = try ForumFixture.launch(
      "/usr/bin/time",
      arguments: [
        "-f", "%M", "-o", rss, forum.binary, "--db", "https://127.0.0.1:\(port)/", "--profile",
        "alice", "list",
      ],
      environment: forum.environment(extra: ["FORUM_CA_FILE": authority.authorityFile]),
      input: Data(), timeout: 120)
    // A server may say "not found" (E404001: exit 4); everything else it does is a failure.
    let refused = mode.hasSuffix("Reason")
    #expect(run.status == (mode == "escapes" ? 4 : refused ? 3 : 1), "\(mode): \(run.summary)")
    if refused {
      #expect(
        run.stderr.hasPrefix("forum: You don't have permission to do that. ("),
        "\(mode): \(run.summary)")
    }
    #expect(run.stderrLines.count == 1, "\(mode): \(run.summary)")
    #expect(run.stdout.isEmpty, "\(mode): \(run.summary)")
    let bytes = Array(run.stderrData)
    #expect(
      !bytes.contains(0x1B) && !bytes.contains(0x07), "\(mode): \(run.stderr.debugDescription)")
    #expect(
      !run.stderr.unicodeScalars.contains {
        $0.value == 0x202E || (0x80...0x9F).contains($0.value)
      },
      "\(mode): \(run.stderr.debugDescription)")
    // time(1) writes "Command exited with non-zero status 1" first, the figure last.
    let report = try String(contentsOfFile: rss, encoding: .utf8)
    let kilobytes =
      report.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
      ?? 0
    // The largest answer taken is 24 MB: whatever the server sends, forum holds about that.
    #expect(kilobytes > 0 && kilobytes < 120_000, "\(mode): \(kilobytes) kB")
  }
}
