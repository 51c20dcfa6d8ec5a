import Datastore
import Forum
import NCMBServer

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// `serve`: the board as an NCMB backend (REST API 2013-09-01) over HTTP or HTTPS, until SIGTERM
/// or Ctrl-C. It runs before any sign-in (the server acts for the apps' users, not for a profile),
/// so `ForumMain` calls `serve` instead of a session's `run`.
enum ServeCommand: BoardlessCommand {
  static let name = "serve"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "serve the board to NCMB apps (REST API 2013-09-01) until SIGTERM or Ctrl-C",
      "ボードを NCMB のアプリに提供 (REST API 2013-09-01)。SIGTERM か Ctrl-C で停止"),
    details: Localized(
      "HOST is an IPv4 address, an IPv6 address in brackets ([::1]:8443) or localhost; port 0 "
        + "takes a free one. With --tls-cert and --tls-key (PEM files) it speaks HTTPS, else "
        + "plain HTTP (put a TLS reverse proxy in front). When ready it prints one line: the URL "
        + "and the application key. On stopping, requests already received are answered first. "
        + "A body is read only once its signature is checked; a connection whose headers or body "
        + "miss their deadline is closed, however it trickles.",
      "HOST は IPv4 アドレス、角括弧で囲んだ IPv6 アドレス ([::1]:8443)、または localhost。ポート 0 は"
        + "空いているポートを使います。--tls-cert と --tls-key (PEM ファイル) があれば HTTPS、"
        + "なければ平文の HTTP です (前に TLS のリバースプロキシを置いてください)。準備ができると URL と"
        + "アプリケーションキーを 1 行表示します。停止時は受け付け済みのリクエストに答えてから終わります。"
        + "本文は署名を確かめてから読みます。ヘッダーや本文が期限までに揃わない接続は切断されます。"),
    parameters: [
      listen, db, certificate, key, connections, connectionsPerAddress, headerDeadline,
      bodyDeadline, bufferBudget, timeLimit, signUps, logins, userWrites, addressWrites,
      readsAtOnce, readBytes, storagePerUser, databaseConnections,
    ])

  static let listen = Option<String>(
    "listen", value: "HOST:PORT",
    help: Localized("where to listen (port 0: a free one)", "待ち受ける場所 (ポート 0 は空きポート)"),
    required: true)
  static let db = databaseOption
  static let certificate = Option<FilePath>(
    "tls-cert", value: "FILE", help: Localized("the certificate (PEM)", "証明書 (PEM)"))
  static let key = Option<FilePath>(
    "tls-key", value: "FILE", help: Localized("its private key (PEM)", "その秘密鍵 (PEM)"))

  /// What a server allows a client unless told otherwise (shown in the options' help).
  static let defaults = HTTPServer.Limits()
  static let connections = Option<ServeLimit>(
    "connections", value: "N",
    help: Localized(
      "open connections at once (default \(defaults.connections))",
      "同時接続数 (既定 \(defaults.connections))"))
  static let connectionsPerAddress = Option<ServeLimit>(
    "connections-per-address", value: "N",
    help: Localized(
      "of them from one address (default \(defaults.connectionsPerAddress); 0: no limit)",
      "1 アドレスからの同時接続数 (既定 \(defaults.connectionsPerAddress)、0 は無制限)"))
  static let headerDeadline = Option<ServeLimit>(
    "header-deadline", value: "SECONDS",
    help: Localized(
      "seconds for a request's headers to come (default \(defaults.headerDeadlineSeconds))",
      "リクエストヘッダーが揃うまでの秒数 (既定 \(defaults.headerDeadlineSeconds))"))
  static let bodyDeadline = Option<ServeLimit>(
    "body-deadline", value: "SECONDS",
    help: Localized(
      "seconds for its body to come after them (default \(defaults.bodyDeadlineSeconds))",
      "その後本文が揃うまでの秒数 (既定 \(defaults.bodyDeadlineSeconds))"))
  static let bufferBudget = Option<ServeLimit>(
    "buffer-budget", value: "MIB",
    help: Localized(
      "memory for bodies, all clients (default \(defaults.bufferedBytes >> 20) MiB; more: 503)",
      "全クライアントの本文に使うメモリ (既定 \(defaults.bufferedBytes >> 20)、超えると 503)"))

  // The budgets (`ServeLimits`): each request's time limit and the rate limits, answered
  // E429001. 0 turns one off.
  static let timeLimit = Option<LimitValue>(
    "time-limit", value: "SECONDS",
    help: Localized(
      "how long a request's database work may run (default \(LimitValue.shown(ServeLimits.defaults.timeLimitSeconds)); 0: no limit)",
      "リクエストの DB 処理の上限秒数 (既定 \(LimitValue.shown(ServeLimits.defaults.timeLimitSeconds))、0 で無制限)"
    ))
  static let signUps = Option<LimitValue>(
    "sign-ups", value: "N",
    help: Localized(
      "sign-ups a minute from one address (default \(ServeLimits.defaults.signUpsPerMinute); 0: no limit)",
      "アドレスごとの毎分のユーザー登録数 (既定 \(ServeLimits.defaults.signUpsPerMinute)、0 で無制限)"))
  static let logins = Option<LimitValue>(
    "logins", value: "N",
    help: Localized(
      "logins a minute from one address (default \(ServeLimits.defaults.loginsPerMinute); 0: no limit)",
      "アドレスごとの毎分のログイン数 (既定 \(ServeLimits.defaults.loginsPerMinute)、0 で無制限)"))
  static let userWrites = Option<LimitValue>(
    "user-writes", value: "N",
    help: Localized(
      "writes a minute by one app user (default \(ServeLimits.defaults.userWritesPerMinute); 0: no limit)",
      "ユーザーごとの毎分の書き込み数 (既定 \(ServeLimits.defaults.userWritesPerMinute)、0 で無制限)"))
  static let addressWrites = Option<LimitValue>(
    "address-writes", value: "N",
    help: Localized(
      "writes a minute from one address (default \(ServeLimits.defaults.addressWritesPerMinute); 0: no limit)",
      "アドレスごとの毎分の書き込み数 (既定 \(ServeLimits.defaults.addressWritesPerMinute)、0 で無制限)"))

  static let readsAtOnce = Option<LimitValue>(
    "reads-at-once", value: "N",
    help: Localized(
      "reads one app user's session runs at once (default \(ServeLimits.defaults.readsAtOnce); 0: no limit)",
      "セッションごとの同時読み出し数 (既定 \(ServeLimits.defaults.readsAtOnce)、0 で無制限)"
    ))

  static let readBytes = Option<LimitValue>(
    "read-bytes", value: "MIB",
    help: Localized(
      "answers to one app user a minute (default \(ServeLimits.defaults.readBytesPerMinute >> 20); 0: no limit)",
      "ユーザーごとの毎分の読み出し量 (既定 \(ServeLimits.defaults.readBytesPerMinute >> 20)、0 で無制限)"
    ))

  static let storagePerUser = Option<ServeLimit>(
    "storage-per-user", value: "MIB",
    help: Localized(
      "objects and files one app user may store (default \(ServeLimits.defaults.storageBytesPerUser >> 20); 0: no limit)",
      "ユーザーごとの保存量の上限 (既定 \(ServeLimits.defaults.storageBytesPerUser >> 20)、0 で無制限)"
    ))

  static let databaseConnections = Option<LimitValue>(
    "database-connections", value: "N",
    help: Localized(
      "DB connections at once, 3/4 for one address (default \(ServeLimits.defaults.databaseConnections); 0: no limit)",
      "同時に使う DB 接続数、1 アドレスは 3/4 まで (既定 \(ServeLimits.defaults.databaseConnections)、0 で無制限)"
    ))

  /// How long requests already received may take to finish once a stop is asked.
  static let graceSeconds = 30.0

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    try serve(
      request(invocation, options: options, messages: messages), json: options.json,
      messages: messages)
  }

  /// What `forum … serve …` asked for.
  struct Request {
    var location: String
    var listen: ListenAddress
    var certificateFile: String?
    var keyFile: String?
    /// What the transport allows a client (connections, deadlines, memory for bodies).
    var transport = ServeCommand.defaults
    /// `--json` after the command.
    var json = false
    /// Each request's time limit and the rate limits.
    var limits = ServeLimits.defaults
  }

  /// What the command's words ask for.
  static func request(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Request
  {
    guard let listenText = invocation[Self.listen] else {
      throw CLIError.usage(messages.serveNeedsListen)
    }
    guard let listen = ListenAddress(parsing: listenText) else {
      throw CLIError.failed(messages.badListen(SafeText.sanitize(listenText)))
    }
    let certificate = invocation[Self.certificate].map { ImageFile.expandTilde($0.path) }
    let key = invocation[Self.key].map { ImageFile.expandTilde($0.path) }
    guard (certificate == nil) == (key == nil) else {
      throw CLIError.usage(messages.tlsNeedsBoth)
    }
    var transport = defaults
    if let value = invocation[connections]?.value { transport.connections = max(1, value) }
    if let value = invocation[connectionsPerAddress]?.value {
      transport.connectionsPerAddress = value
    }
    if let value = invocation[headerDeadline]?.value { transport.headerDeadlineSeconds = value }
    if let value = invocation[bodyDeadline]?.value { transport.bodyDeadlineSeconds = value }
    if let value = invocation[bufferBudget]?.value { transport.bufferedBytes = value << 20 }
    var limits = ServeLimits.defaults
    if let value = invocation[timeLimit] { limits.timeLimitSeconds = value.value }
    if let value = invocation[signUps] { limits.signUpsPerMinute = try value.count(messages) }
    if let value = invocation[logins] { limits.loginsPerMinute = try value.count(messages) }
    if let value = invocation[userWrites] { limits.userWritesPerMinute = try value.count(messages) }
    if let value = invocation[readsAtOnce] { limits.readsAtOnce = try value.count(messages) }
    if let value = invocation[storagePerUser]?.value { limits.storageBytesPerUser = value << 20 }
    if let value = invocation[databaseConnections] {
      limits.databaseConnections = try value.count(messages)
    }
    if let value = invocation[readBytes] {
      limits.readBytesPerMinute = Int((value.value * 1_048_576).rounded())
    }
    if let value = invocation[addressWrites] {
      limits.addressWritesPerMinute = try value.count(messages)
    }
    return Request(
      location: location(invocation[db], options: options), listen: listen,
      certificateFile: certificate, keyFile: key, transport: transport,
      json: invocation[GlobalOptions.jsonFlag], limits: limits)
  }

  /// Serves until SIGTERM or SIGINT; returns the exit status. Errors before the ready line are
  /// thrown (one line on stderr, exit 1).
  static func serve(_ request: Request, json: Bool, messages: Messages) throws -> Int32 {
    // Blocked before any thread starts (the service's checkpointer and write queue, the
    // transport's workers), so that they inherit the mask and only `sigwait` below sees the
    // signals: a stop is then an ordinary step of this thread, not a handler. A thread started
    // earlier with them open took the second Ctrl-C or SIGTERM and died of it, whole server and
    // all, instead of stopping the requests still running.
    var stopSignals = sigset_t()
    sigemptyset(&stopSignals)
    sigaddset(&stopSignals, SIGINT)
    sigaddset(&stopSignals, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
    var tls: HTTPServer.TLSIdentity?
    if let certificateFile = request.certificateFile, let keyFile = request.keyFile {
      tls = HTTPServer.TLSIdentity(
        certificatePEM: try readPEM(certificateFile, isKey: false, messages: messages),
        keyPEM: try readPEM(keyFile, isKey: true, messages: messages))
    }
    // The service keeps the rules the file records. A file no one ran `forum init` or the prompt
    // on (new, or made by `forum keys`) records none: it would serve a bare datastore (threads
    // without number or author, publicly writable); one an earlier forum made records older
    // ones (an app could set the pin, which they did not manage). Whoever holds the file is its
    // owner, so the server installs this forum's, as the prompt's open would. PostgreSQL's are
    // the owner's `forum init`.
    if EngineKind(location: request.location) == .sqlite,
      try Datastore.open(request.location).rules != Board.rules
    {
      try Board.initialize(location: request.location)
    }
    let service = try NCMBService(
      location: request.location, policy: .board, limits: request.limits)
    // A client gone mid-answer is an error of that write, not a signal that ends the server.
    signal(SIGPIPE, SIG_IGN)
    let server: HTTPServer
    do {
      server = try HTTPServer(
        address: request.listen, tls: tls, limits: request.transport, handler: service)
    } catch let error as HTTPServerError {
      throw CLIError.failed(messages.serverDidNotStart(error))
    }
    let url = server.baseURL + "/" + NCMBService.apiVersion + "/"
    let key = applicationKey(of: service)
    if json || request.json {
      let line: JSONValue = .object(["url": .string(url), "applicationKey": .string(key)])
      print(line.jsonText())
    } else {
      print(messages.serving(url: url, applicationKey: key))
    }
    fflush(stdout)
    var received: Int32 = 0
    sigwait(&stopSignals, &received)
    server.stop(graceSeconds: graceSeconds) {
      // A second Ctrl-C or SIGTERM: stop waiting for the requests still running, and stop
      // their statements (each answered E500001, its write undone), so the workers end now.
      var pending = sigset_t()
      sigpending(&pending)
      let hurry = sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1
      if hurry { service.stopRunning() }
      return hurry
    }
    return 0
  }

  /// The board's application key, as apps are configured with it, safe for a terminal (it is
  /// the board's text: whoever holds the file may have written anything there).
  static func applicationKey(of service: NCMBService) -> String {
    SafeText.sanitize((try? service.keys().applicationKey) ?? "(unreadable)")
  }

  /// A certificate or key file's text, at most 1 MB.
  private static func readPEM(_ path: String, isKey: Bool, messages: Messages) throws -> [UInt8] {
    let shown = SafeText.sanitize(path)
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw CLIError.failed(
        messages.cannotReadTLSFile(shown, isKey: isKey, reason: String(cString: strerror(errno))))
    }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw CLIError.failed(
          messages.cannotReadTLSFile(shown, isKey: isKey, reason: String(cString: strerror(errno))))
      }
      if count == 0 { break }
      bytes += chunk[0..<count]
      if bytes.count > 1 << 20 {
        throw CLIError.failed(
          messages.cannotReadTLSFile(shown, isKey: isKey, reason: messages.tlsFileTooLarge))
      }
    }
    guard bytes.count > 0, !bytes.contains(0) else {
      throw CLIError.failed(
        messages.cannotReadTLSFile(shown, isKey: isKey, reason: messages.tlsFileNotPEM))
    }
    return bytes
  }
}

/// A limit `serve` is given: a whole number from 0 to 1,000,000 (0 turns a deadline or the limit
/// per address off).
struct ServeLimit: ArgumentValue, Equatable {
  let value: Int
  static var valueName: String { "N" }
  init(parsing word: String, messages: Messages) throws {
    guard word.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(word),
      value <= 1_000_000
    else { throw CLIError.usage(messages.notANumber("limit", SafeText.sanitize(word))) }
    self.value = value
  }
}

/// A limit's value: a number from 0 (`--time-limit 2.5`, `--sign-ups 30`; 0 turns it off).
struct LimitValue: ArgumentValue, Equatable {
  let value: Double
  let word: String
  static var valueName: String { "N" }
  init(parsing word: String, messages: Messages) throws {
    guard let value = Double(word), value.isFinite, value >= 0, value <= 1e9 else {
      throw CLIError.usage(messages.notANumber("the limit", SafeText.sanitize(word)))
    }
    self.value = value
    self.word = word
  }

  /// A whole number of requests.
  func count(_ messages: Messages) throws -> Int {
    guard value == value.rounded() else {
      throw CLIError.usage(messages.notANumber("the limit", SafeText.sanitize(word)))
    }
    return Int(value)
  }

  /// `5`, `2.5`.
  static func shown(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
  }
}
