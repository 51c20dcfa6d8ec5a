/// Why a board cannot be opened or kept open: the file or the server under it, not a rule of the
/// board (`Reason.access`). A library's own message (libpq's, strerror's) stays as the library
/// wrote it, in parentheses.
public enum BoardAccessReason: Sendable, Equatable {
  // SQLite: the path and the file.
  case namesDirectory(path: String)
  case directoryMissing(path: String, directory: String)
  case isDirectory(path: String)
  case notRegularFile(path: String)
  case readOnly(path: String)
  case anotherProgramsDatabase(path: String)
  case noWAL(path: String)
  case notSQLite(path: String)
  case cannotOpen(path: String)
  case damaged(path: String)
  case diskFull(path: String)
  /// The file was set up by a newer forum: its rules format or its schema version.
  case newerRules(path: String, format: Int)
  case newerSchema(path: String, version: Int)
  /// The file was moved or deleted while open; `nothingWritten` when a write was refused.
  case movedOrDeleted(path: String, nothingWritten: Bool)
  /// A profile's directory could not be made (`error`: the system's words).
  case cannotCreateDirectory(path: String, error: String)
  // PostgreSQL: the library, the server, the schema.
  case libpqMissing(error: String)
  case serverUnreachable(error: String)
  case loginRefused(error: String)
  case notForumMember(role: String)
  case noForumSchema(database: String)
  case newerPostgresSchema(version: Int)
  case schemaMissing
  case connectionLost(error: String)
  // A board a `forum serve` holds (https://): the server, named by host and port.
  case remoteUnreachable(server: String, error: String)
  case remoteCertificate(server: String, error: String)
  case remoteTimedOut(server: String)
  case remoteAnswerTooLarge(server: String, megabytes: Int)
  case remoteMalformed(server: String, what: String)
  case libcurlMissing(error: String)
  /// An owner's tool (`forum init`, `keys`, `index`, `import`) named an https board: it runs on
  /// the host where `forum serve` holds the board.
  case ownerToolOverHTTPS(command: String, server: String)

  public var wording: Wording {
    let upgrade = "新しい forum に更新してください。"
    switch self {
    case .namesDirectory(let path):
      return Wording(
        "\(path) names a directory, not a database file",
        "\(path) はディレクトリです。データベースのファイルを指定してください。")
    case .directoryMissing(let path, let directory):
      return Wording(
        "cannot open database \(path): directory \(directory) does not exist",
        "データベース \(path) を開けません。ディレクトリ \(directory) がありません。")
    case .isDirectory(let path):
      return Wording(
        "\(path) is a directory, not a database file",
        "\(path) はディレクトリです。データベースのファイルを指定してください。")
    case .notRegularFile(let path):
      return Wording(
        "\(path) is not a regular file (a FIFO, device or socket)",
        "\(path) は通常のファイルではありません (FIFO、デバイスまたはソケット)。")
    case .readOnly(let path):
      return Wording("database \(path) is read-only", "データベース \(path) は読み取り専用です。")
    case .anotherProgramsDatabase(let path):
      return Wording(
        "\(path) is an SQLite database of another program", "\(path) はほかのプログラムの SQLite データベースです。")
    case .noWAL(let path):
      return Wording("database \(path) cannot use WAL mode", "データベース \(path) は WAL モードを使えません。")
    case .notSQLite(let path):
      return Wording(
        "\(path) is not a forum database (not an SQLite file)",
        "\(path) は forum のデータベースではありません (SQLite のファイルではありません)。")
    case .cannotOpen(let path):
      return Wording("cannot open database \(path)", "データベース \(path) を開けません。")
    case .damaged(let path):
      return Wording("database \(path) is damaged", "データベース \(path) は壊れています。")
    case .diskFull(let path):
      return Wording("the disk holding \(path) is full", "\(path) のあるディスクがいっぱいです。")
    case .newerRules(let path, let format):
      return Wording(
        "\(path) was set up by a newer forum (rules \(format)); upgrade forum",
        "\(path) は新しい forum で作られています (ルール \(format))。" + upgrade)
    case .newerSchema(let path, let version):
      return Wording(
        "\(path) was written by a newer forum (schema \(version))",
        "\(path) は新しい forum で書かれています (スキーマ \(version))。" + upgrade)
    case .movedOrDeleted(let path, let nothingWritten):
      return Wording(
        "the database file \(path) was moved or deleted while forum had it open"
          + (nothingWritten ? "; nothing was written" : ""),
        "開いている間にデータベースのファイル \(path) が移動または削除されました。"
          + (nothingWritten ? "何も書き込んでいません。" : ""))
    case .cannotCreateDirectory(let path, let error):
      return Wording("cannot create \(path): \(error)", "\(path) を作れません (\(error))。")
    case .libpqMissing(let error):
      return Wording(
        "PostgreSQL boards need libpq, which cannot be loaded (\(error)); "
          + "install libpq5 (Debian: apt-get install libpq5)",
        "PostgreSQL の掲示板には libpq が必要ですが、読み込めません (\(error))。"
          + "libpq5 を入れてください (Debian: apt-get install libpq5)。")
    case .serverUnreachable(let error):
      return Wording(
        "cannot reach the PostgreSQL server (\(error)); check the host and port in --db",
        "PostgreSQL サーバーにつながりません (\(error))。--db のホストとポートを確かめてください。")
    case .loginRefused(let error):
      return Wording(
        "the PostgreSQL server refused the login (\(error)); check the user name and "
          + "password, or ask the board's owner to add you",
        "PostgreSQL サーバーがログインを断りました (\(error))。ユーザー名とパスワードを確かめるか、"
          + "掲示板の持ち主に追加を頼んでください。")
    case .notForumMember(let role):
      return Wording(
        "role \(role) is not a member of forum_member: ask the board's owner to run "
          + "`GRANT forum_member TO \(role)`",
        "ロール \(role) は forum_member のメンバーではありません。掲示板の持ち主に "
          + "`GRANT forum_member TO \(role)` の実行を頼んでください。")
    case .noForumSchema(let database):
      return Wording(
        "database \(database) has no forum schema: run `forum init --db URI` as the "
          + "database owner",
        "データベース \(database) に forum のスキーマがありません。データベースの持ち主が "
          + "`forum init --db URI` を実行してください。")
    case .newerPostgresSchema(let version):
      return Wording(
        "the forum schema is newer (version \(version)) than this forum: upgrade forum",
        "forum のスキーマ (バージョン \(version)) はこの forum より新しいです。" + upgrade)
    case .schemaMissing:
      return Wording(
        "the forum schema is missing: run `forum init` as the database owner",
        "forum のスキーマがありません。データベースの持ち主が `forum init` を実行してください。")
    case .connectionLost(let error):
      return Wording(
        "lost the connection to the PostgreSQL server (\(error)); start forum again",
        "PostgreSQL サーバーとの接続が切れました (\(error))。forum を起動し直してください。")
    case .remoteUnreachable(let server, let error):
      return Wording(
        "cannot reach the board at \(server) (\(error)); is `forum serve` running there?",
        "\(server) の掲示板につながりません (\(error))。そこで `forum serve` が動いていますか?")
    case .remoteCertificate(let server, let error):
      return Wording(
        "the board at \(server) has a certificate nobody here vouches for (\(error)); for a "
          + "private authority set FORUM_CA_FILE to its PEM file",
        "\(server) の掲示板の証明書を確かめられません (\(error))。私設の認証局なら "
          + "FORUM_CA_FILE にその PEM ファイルを指定してください。")
    case .ownerToolOverHTTPS(let command, let server):
      return Wording(
        "forum \(command) runs on the board's host (\(server)), where forum serve holds it, "
          + "not over https",
        "forum \(command) はボードのホスト (\(server)) で実行します (forum serve が動いているところ)。"
          + "https 越しにはできません。")
    case .remoteTimedOut(let server):
      return Wording(
        "the board at \(server) did not answer in time; nothing more was sent",
        "\(server) の掲示板が時間内に応答しませんでした。")
    case .remoteAnswerTooLarge(let server, let megabytes):
      return Wording(
        "the board at \(server) sent an answer over \(megabytes) MB; it was not read",
        "\(server) の掲示板の応答が \(megabytes) MB を超えたので読みませんでした。")
    case .remoteMalformed(let server, let what):
      return Wording(
        "the board at \(server) answered in a way forum does not understand (\(what))",
        "\(server) の掲示板の応答を forum が理解できません (\(what))。")
    case .libcurlMissing(let error):
      return Wording(
        "https:// boards need libcurl, which cannot be loaded (\(error)); install libcurl4 "
          + "(Debian: apt-get install libcurl4)",
        "https:// の掲示板には libcurl が必要ですが、読み込めません (\(error))。libcurl4 を"
          + "入れてください (Debian: apt-get install libcurl4)。")
    }
  }
}
