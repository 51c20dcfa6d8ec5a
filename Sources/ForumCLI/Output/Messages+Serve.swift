import NCMBServer

extension Messages {
  func onlyFromCommandLine(_ command: String) -> String {
    japanese
      ? "\(command) はコマンドラインから実行します: forum help \(command)"
      : "\(command) runs from the command line: see forum help \(command)"
  }

  /// `postgres`: members are PostgreSQL roles, so how to add one follows; a file's members are
  /// whoever opens it.
  func schemaReady(_ shown: String, postgres: Bool) -> String {
    guard postgres else {
      return japanese ? "\(shown) のスキーマは最新です。" : "The board's schema at \(shown) is up to date."
    }
    return japanese
      ? "\(shown) のスキーマは最新です。メンバーの追加: CREATE ROLE 名前 LOGIN IN ROLE forum_member;"
      : "The board's schema at \(shown) is up to date. Add a member with: "
        + "CREATE ROLE name LOGIN IN ROLE forum_member;"
  }

  var serveNeedsListen: String {
    japanese
      ? "serve には --listen HOST:PORT が必要です (例: --listen 127.0.0.1:8443)"
      : "serve needs --listen HOST:PORT (for example --listen 127.0.0.1:8443)"
  }

  func takesNoArgument(_ command: String, _ word: String) -> String {
    japanese
      ? "\(command) は引数を取りません: \(word) (forum help \(command) を参照)"
      : "\(command) takes no argument, not \(word); see forum help \(command)"
  }

  func badListen(_ text: String) -> String {
    japanese
      ? "--listen \(text) は HOST:PORT ではありません。HOST は IPv4 アドレス、[IPv6 アドレス] または "
        + "localhost、PORT は 0〜65535 です"
      : "--listen \(text) is not HOST:PORT: HOST is an IPv4 address, an [IPv6 address] or "
        + "localhost, PORT 0-65535"
  }

  var tlsNeedsBoth: String {
    japanese
      ? "--tls-cert と --tls-key は両方指定します" : "--tls-cert and --tls-key go together"
  }

  func cannotReadTLSFile(_ path: String, isKey: Bool, reason: String) -> String {
    japanese
      ? "TLS の\(isKey ? "秘密鍵" : "証明書") \(path) を読めません: \(reason)"
      : "cannot read the TLS \(isKey ? "key" : "certificate") \(path): \(reason)"
  }

  var tlsFileTooLarge: String { japanese ? "1 MB を超えています" : "larger than 1 MB" }
  var tlsFileNotPEM: String {
    japanese ? "PEM のテキストではありません" : "not PEM text"
  }

  func serverDidNotStart(_ error: HTTPServerError) -> String {
    switch error {
    case .addressInUse(let address):
      return japanese
        ? "\(address.urlHost):\(address.port) は使用中です (別のサーバーが待ち受けています)"
        : "\(address.urlHost):\(address.port) is in use (another server listens there)"
    case .cannotListen(let address, let reason):
      return japanese
        ? "\(address.urlHost):\(address.port) で待ち受けられません: \(reason)"
        : "cannot listen on \(address.urlHost):\(address.port): \(reason)"
    case .tlsRefused(let reason):
      return japanese
        ? "TLS の証明書と秘密鍵を使えません: \(SafeText.sanitize(reason))"
        : "the TLS certificate and key cannot be used: \(SafeText.sanitize(reason))"
    case .libraryUnavailable(let reason):
      return japanese
        ? "serve には libmicrohttpd12 が必要ですが、読み込めません (\(SafeText.sanitize(reason)))。"
          + "インストールしてください (Debian: apt-get install libmicrohttpd12)"
        : "serve needs libmicrohttpd12, which cannot be loaded (\(SafeText.sanitize(reason))); "
          + "install it (Debian: apt-get install libmicrohttpd12)"
    }
  }

  /// The ready line: the one line `forum serve` prints on stdout.
  func serving(url: String, applicationKey: String) -> String {
    japanese
      ? "\(url) で提供中 (アプリケーションキー \(applicationKey))"
      : "Serving \(url) with application key \(applicationKey)"
  }
}
