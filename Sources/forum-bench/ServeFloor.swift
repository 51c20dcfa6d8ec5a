import Foundation
import NCMBServer

/// `forum-bench serve-floor --listen HOST:PORT --body FILE`: the floor of `forum serve`, the same
/// HTTP server (libmicrohttpd through `HTTPServer`, same limits and threads) answering every
/// request with the same bytes from memory. Prints its URL, serves until SIGTERM or SIGINT.
enum ServeFloor {
  final class ConstantHandler: HTTPHandler, Sendable {
    let response: HTTPResponse
    init(body: [UInt8]) {
      response = HTTPResponse(
        status: 200, headers: [("content-type", "application/json")], body: body)
    }
    func respond(to request: HTTPRequest) -> HTTPResponse { response }
  }

  static func main(_ arguments: [String]) -> Int32 {
    var listen: String?
    var bodyFile: String?
    var index = 0
    while index + 1 < arguments.count {
      switch arguments[index] {
      case "--listen": listen = arguments[index + 1]
      case "--body": bodyFile = arguments[index + 1]
      default:
        FileHandle.standardError.write(Data("unknown option \(arguments[index])\n".utf8))
        return 2
      }
      index += 2
    }
    guard let listen, let address = ListenAddress(parsing: listen), let bodyFile,
      let body = FileManager.default.contents(atPath: bodyFile)
    else {
      FileHandle.standardError.write(
        Data("usage: forum-bench serve-floor --listen HOST:PORT --body FILE\n".utf8))
      return 2
    }
    var stopSignals = sigset_t()
    sigemptyset(&stopSignals)
    sigaddset(&stopSignals, SIGINT)
    sigaddset(&stopSignals, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
    signal(SIGPIPE, SIG_IGN)
    do {
      let server = try HTTPServer(
        address: address, tls: nil, handler: ConstantHandler(body: Array(body)))
      print(server.baseURL + "/")
      fflush(nil)  // stdout with the rest: Swift 6 reads no C global var
      var received: Int32 = 0
      sigwait(&stopSignals, &received)
      server.stop(graceSeconds: 5)
      return 0
    } catch {
      FileHandle.standardError.write(Data("serve-floor: \(error)\n".utf8))
      return 1
    }
  }
}
