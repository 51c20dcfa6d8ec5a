import Forum

/// `init`: creates or brings up to date the board's schema at `--db`. On PostgreSQL it is run
/// once by the database's owner (members never need DDL); on a file it does what opening does.
/// It runs before any sign-in, so `ForumMain` calls `initialize` instead of a session's `run`.
enum InitCommand: ForumCommand {
  static let info = CommandInfo(
    name: "init", usage: "init [--db PATH|URI]",
    summary: Localized(
      "create or update the board's schema at --db (PostgreSQL: run as the database owner)",
      "--db のボードのスキーマを作成・更新 (PostgreSQL ではデータベースの所有者が実行)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    throw CLIError.usage(
      session.messages.japanese
        ? "init はコマンドラインから実行します: forum init --db URI"
        : "init runs from the command line: forum init --db URI")
  }

  /// The board `forum init` works on: a `--db` after `init` (the form every "no forum schema"
  /// error names) wins over the global one. Any other word is a usage error, so a mistyped line
  /// never initialises the default board instead of the one meant.
  static func location(words: ArraySlice<String>, default global: () -> String) throws -> String {
    var location: String?
    var index = words.startIndex
    while index < words.endIndex {
      let word = words[index]
      index += 1
      if let given = try databaseOption(word, in: words, at: &index) {
        location = given
      } else if word != "--json" && word != "--no-color" {
        throw CLIError.usage(
          "init takes only --db PATH|URI, not \(SafeText.sanitize(word)); see forum help init")
      }
    }
    guard let location, !location.isEmpty else { return global() }
    return ImageFile.expandTilde(location)
  }

  /// `--db=VALUE`, or `--db` and the next word (advancing `index` past it): the location given,
  /// or nil when `word` is not `--db`. Shared by the commands that run before sign-in (`init`,
  /// `keys`), which read their own `--db` after the command word.
  static func databaseOption(_ word: String, in words: ArraySlice<String>, at index: inout Int)
    throws -> String?
  {
    if word.hasPrefix("--db=") { return String(word.dropFirst("--db=".count)) }
    guard word == "--db" else { return nil }
    guard index < words.endIndex, !words[index].hasPrefix("--") else {
      throw CLIError.usage("--db needs a value")
    }
    defer { index += 1 }
    return words[index]
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
