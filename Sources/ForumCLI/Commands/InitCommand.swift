import Datastore
import Forum

/// `init`: creates or brings up to date the board's schema at `--db`. On PostgreSQL it is run
/// once by the database's owner (members never need DDL); on a file it does what opening does.
enum InitCommand: BoardlessCommand {
  static let name = "init"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "create or update the board's schema at --db (PostgreSQL: run as the database owner)",
      "--db のボードのスキーマを作成・更新 (PostgreSQL ではデータベースの所有者が実行)"),
    parameters: [db])

  static let db = databaseOption

  /// Any other word is a usage error, so a mistyped line never initialises the default board
  /// instead of the one meant.
  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    let location = try boardsHostLocation(invocation[db], options: options)
    let shown = try Board.initialize(location: location)
    let said = SafeText.sanitize(
      messages.schemaReady(shown, postgres: EngineKind(location: location) == .postgres))
    print(
      options.json || invocation[GlobalOptions.jsonFlag]
        ? JSONValue.object(["message": .string(said)]).jsonText() : said)
    return 0
  }
}
