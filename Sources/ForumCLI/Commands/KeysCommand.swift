import Datastore
import Forum

/// `keys`: the board's NCMB application and client keys, made on first use and kept in the board;
/// `--rotate` replaces them (apps holding the old ones are refused from then on). Only the board's
/// owner may run it (on SQLite, whoever holds the file). It needs no sign-in, so `ForumMain` calls
/// `show` instead of a session's `run`.
enum KeysCommand: ForumCommand {
  static let info = CommandInfo(
    name: "keys", usage: "keys [--db PATH|URI] [--json] [--rotate]",
    summary: Localized(
      "print the board's NCMB application and client keys (--rotate: make new ones)",
      "ボードの NCMB アプリケーションキーとクライアントキーを表示 (--rotate で新しくする)"),
    options: ["db", "json", "rotate"])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    throw CLIError.usage(
      session.messages.japanese
        ? "keys はコマンドラインから実行します: forum keys"
        : "keys runs from the command line: forum keys")
  }

  struct Request {
    var location: String
    var rotate = false
    var json = false
  }

  /// What `forum keys …` asked for; any other word is a usage error.
  static func request(words: ArraySlice<String>, json: Bool, default global: () -> String) throws
    -> Request
  {
    var location: String?
    var request = Request(location: "", json: json)
    var index = words.startIndex
    while index < words.endIndex {
      let word = words[index]
      index += 1
      if let given = try InitCommand.databaseOption(word, in: words, at: &index) {
        location = given
      } else if word == "--rotate" {
        request.rotate = true
      } else if word == "--json" {
        request.json = true
      } else {
        throw CLIError.usage(
          "keys takes only --db PATH|URI, --json and --rotate, not \(SafeText.sanitize(word))")
      }
    }
    request.location =
      location.flatMap { $0.isEmpty ? nil : ImageFile.expandTilde($0) } ?? global()
    return request
  }

  /// The lines to print.
  static func show(_ request: Request) throws -> String {
    let keys = try Datastore.open(request.location).applicationKeys(rotate: request.rotate)
    if request.json { return keys.json.jsonText() }
    return "applicationKey: \(keys.applicationKey)\nclientKey: \(keys.clientKey)"
  }
}
