import Foundation
import HTTPTestSupport
import Spawning
import Testing

/// Four writers post `Todo`s (a 2,000-byte filler each, as one app user) to a running
/// `forum serve` as fast as they can; after the first 20 the server gets SIGTERM. Answers the
/// objectIds it acknowledged, having checked that no request was refused and that the server
/// exited 0. What was stored is for the caller's engine to read.
enum SigtermDuringWrites {
  static let script =
    SignedClient.prelude + """
      import threading
      me, token = signup()
      acknowledged, lock = [], threading.Lock()
      def writer(k):
          n = 0
          while True:
              try:
                  status, body, _ = call('POST', 'classes/Todo',
                                         {'title': 'todo %d-%d' % (k, n), 'filler': 'x' * 2000},
                                         token)
              except (OSError, http.client.HTTPException):
                  return
              if status != 201:
                  print('refused', status, body, file=sys.stderr)
                  return
              with lock:
                  acknowledged.append(body['objectId'])
              if n == 20 and k == 0:
                  print('writing', flush=True)
              n += 1
      threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
      for t in threads:
          t.start()
      for t in threads:
          t.join()
      print(json.dumps(acknowledged))
      """

  static func acknowledged(server: ServeProcess, keys: String) throws -> [String] {
    let client = ChildProcess()
    client.executableURL = URL(fileURLWithPath: try Clients.require("/usr/bin/python3"))
    client.arguments = ["-c", script, String(server.port), keys]
    let output = Pipe()
    let errors = Pipe()
    client.standardOutput = output
    client.standardError = errors
    try client.run()
    // The signal waits for the first line, so that it lands while the writers are writing.
    let first = output.fileHandleForReading.firstLine()
    #expect(first.hasPrefix("writing\n"), "\(first)")
    kill(server.process.processIdentifier, SIGTERM)
    let rest = output.fileHandleForReading.readDataToEndOfFile()
    client.waitUntilExit()
    let problems = String(
      decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(problems == "", "\(problems)")
    #expect(server.waitForExit(timeout: 60) == 0)
    let lines = (first + String(decoding: rest, as: UTF8.self)).split(separator: "\n")
    let acknowledged =
      (try? JSONSerialization.jsonObject(with: Data((lines.last ?? "").utf8))) as? [String] ?? []
    #expect(acknowledged.count > 20, "\(lines.suffix(2))")
    return acknowledged
  }
}
