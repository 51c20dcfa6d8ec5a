import Datastore
import Forum
import NCMBServer

/// `mod limits` and `mod storage-per-member`: the limits people are held to, each with its value
/// and where it comes from (the board's settings, which a running `forum serve` reads at each
/// write, or `forum serve`'s options, whose defaults are shown), and the owner's one setting of
/// them that is not a server option: the storage bound per member.
enum ModLimits {
  /// One limit: its name, its value as shown, and where it comes from.
  struct Line {
    let name: String
    let value: String
    let bytes: Int?
    let source: String
  }

  static func show(in session: Session) throws {
    let lines = try limits(session)
    if session.json {
      session.emit(
        .object([
          "limits": .array(
            lines.map {
              .object([
                "name": .string($0.name), "value": .string($0.value),
                "bytes": $0.bytes.map { JSONValue.int(Int64($0)) } ?? .null,
                "source": .string($0.source),
              ])
            })
        ]))
      return
    }
    let nameWidth = lines.map { SafeText.width($0.name) }.max() ?? 0
    let valueWidth = lines.map { SafeText.width($0.value) }.max() ?? 0
    func padded(_ text: String, _ width: Int) -> String {
      text + String(repeating: " ", count: max(0, width - SafeText.width(text)))
    }
    for line in lines {
      print(
        padded(line.name, nameWidth) + "  " + padded(line.value, valueWidth) + "  "
          + line.source)
    }
  }

  /// Shows, or sets (owner only; `off` clears) the storage bound per member, in MiB.
  static func storagePerMember(_ value: String?, in session: Session) throws {
    let messages = session.messages
    if let value {
      let bytes: Int?
      if value == "off" {
        bytes = nil
      } else if let mebibytes = Int(value), mebibytes >= 1,
        mebibytes <= DatastoreClient.memberStorageBytesLimit >> 20
      {
        bytes = mebibytes << 20
      } else {
        throw CLIError.usage(messages.storagePerMemberUsage(SafeText.sanitize(value)))
      }
      try session.board.setMemberStorageBytes(bytes)
    }
    let current = try session.board.memberStorageBytes()
    if session.json {
      session.emit(
        .object(["memberStorageBytes": current.map { JSONValue.int(Int64($0)) } ?? .null]))
    } else {
      print(messages.storagePerMemberIs(current.map(shown)))
    }
  }

  static func shown(_ bytes: Int) -> String {
    if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    if bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
    return "\(bytes) bytes"
  }

  private static func limits(_ session: Session) throws -> [Line] {
    let m = session.messages
    let board = session.board
    var lines: [Line] = []
    let posts = try board.postsPerMinute()
    lines.append(
      Line(
        name: m.pick("posts a minute per ssh key", "ssh の鍵ごとの毎分の投稿数"),
        value: posts.map { $0 == 0 ? m.pick("none", "なし") : String($0) }
          ?? String(SSHDoor.defaultPostsPerMinute),
        bytes: nil,
        source: posts == nil
          ? m.pick(
            "the ssh door's --posts-per-minute (default); the board sets none",
            "ssh の入口の --posts-per-minute (既定)。掲示板の設定なし")
          : m.pick("the board: mod posts-per-minute", "掲示板: mod posts-per-minute")))
    let storage = try board.memberStorageBytes()
    let postgres = EngineKind(location: board.location) == .postgres
    lines.append(
      Line(
        name: m.pick("storage per member", "メンバーごとの保存量"),
        value: storage.map(shown) ?? m.pick("none", "なし"), bytes: storage,
        source: storage == nil
          ? m.pick(
            "the board sets none (mod storage-per-member MIB)",
            "掲示板の設定なし (mod storage-per-member MIB)")
          : postgres
            ? m.pick(
              "the board: mod storage-per-member (the database holds members' own writes and "
                + "forum serve its app users' to it)",
              "掲示板: mod storage-per-member (データベースがメンバーの書き込みに、forum serve がアプリの"
                + "ユーザーに適用)")
            : m.pick(
              "the board: mod storage-per-member (forum serve holds its app users to it)",
              "掲示板: mod storage-per-member (forum serve がアプリのユーザーに適用)")))
    let serve = ServeLimits.defaults
    let http = ServeCommand.defaults
    // forum serve's options: (English, Japanese, the default as shown, the option, bytes).
    let options: [(String, String, String, String, Int?)] = [
      (
        "database time per request", "リクエストごとの DB 処理時間",
        "\(LimitValue.shown(serve.timeLimitSeconds)) s", "time-limit", nil
      ),
      (
        "sign-ups a minute per address", "アドレスごとの毎分の登録数",
        String(serve.signUpsPerMinute), "sign-ups", nil
      ),
      (
        "logins a minute per address", "アドレスごとの毎分のログイン数",
        String(serve.loginsPerMinute), "logins", nil
      ),
      (
        "writes a minute per session", "セッションごとの毎分の書き込み数",
        String(serve.userWritesPerMinute), "user-writes", nil
      ),
      (
        "writes a minute per address", "アドレスごとの毎分の書き込み数",
        String(serve.addressWritesPerMinute), "address-writes", nil
      ),
      (
        "reads at once per session", "セッションごとの同時読み出し数",
        String(serve.readsAtOnce), "reads-at-once", nil
      ),
      (
        "answer bytes a minute per app user", "ユーザーごとの毎分の読み出し量",
        shown(serve.readBytesPerMinute), "read-bytes", serve.readBytesPerMinute
      ),
      (
        "storage per app user (at most the storage per member)",
        "アプリのユーザーごとの保存量 (メンバーごとの上限以下)",
        shown(serve.storageBytesPerUser), "storage-per-user", serve.storageBytesPerUser
      ),
      (
        "bodies in memory, all clients", "全クライアントの本文のメモリ",
        shown(http.bufferedBytes), "buffer-budget", http.bufferedBytes
      ),
      (
        "seconds for a request's headers", "リクエストヘッダーの秒数",
        String(http.headerDeadlineSeconds), "header-deadline", nil
      ),
      ("seconds for its body", "本文の秒数", String(http.bodyDeadlineSeconds), "body-deadline", nil),
      ("connections at once", "同時接続数", String(http.connections), "connections", nil),
      (
        "connections per address", "アドレスごとの同時接続数",
        String(http.connectionsPerAddress), "connections-per-address", nil
      ),
      (
        "database connections (3/4 for one address)", "DB 接続数 (1 アドレスは 3/4 まで)",
        String(serve.databaseConnections), "database-connections", nil
      ),
    ]
    lines += options.map { english, japanese, value, flag, bytes in
      Line(
        name: m.pick(english, japanese), value: value, bytes: bytes,
        source: m.pick(
          "forum serve --\(flag) (default; a server started with it may differ)",
          "forum serve --\(flag) (既定値。指定して起動したサーバーでは異なります)"))
    }
    // Fixed sizes: not options.
    let fixed: [(String, String, Int)] = [
      ("one answer", "1 回の応答", 16 << 20),
      ("one request body", "1 回のリクエスト本文", http.bodyBytes),
      ("one JSON body", "1 回の JSON 本文", NCMBService.maximumJSONBytes),
    ]
    lines += fixed.map { english, japanese, bytes in
      Line(
        name: m.pick(english, japanese), value: shown(bytes), bytes: bytes,
        source: m.pick("forum serve (fixed)", "forum serve (固定)"))
    }
    return lines
  }
}
