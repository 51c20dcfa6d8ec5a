import Forum

/// `init`: creates or brings up to date the board's schema at `--db`. On PostgreSQL it is run
/// once by the database's owner (members never need DDL); on a file it does what opening does.
/// It runs before any sign-in, so `ForumMain` calls `initialize` instead of a session's `run`.
enum InitCommand: ForumCommand {
  static let info = CommandInfo(
    name: "init", usage: "init",
    summary: Localized(
      "create or update the board's schema at --db (PostgreSQL: run as the database owner)",
      "--db のボードのスキーマを作成・更新 (PostgreSQL ではデータベースの所有者が実行)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    throw CLIError.usage(
      session.messages.japanese
        ? "init はコマンドラインから実行します: forum init --db URI"
        : "init runs from the command line: forum init --db URI")
  }

  /// Installs the schema; returns the line to print.
  static func initialize(location: String, japanese: Bool) throws -> String {
    let shown = try Board.initialize(location: location)
    return japanese
      ? "\(shown) のスキーマは最新です。メンバーの追加: CREATE ROLE 名前 LOGIN IN ROLE forum_member;"
      : "The board's schema at \(shown) is up to date. Add a member with: "
        + "CREATE ROLE name LOGIN IN ROLE forum_member;"
  }
}
