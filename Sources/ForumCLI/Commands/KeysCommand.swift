import Datastore
import Forum

/// `keys`: the board's NCMB application and client keys, made on first use and kept in the board;
/// `--rotate` replaces them (apps holding the old ones are refused from then on). Only the board's
/// owner may run it (on SQLite, whoever holds the file). It needs no sign-in.
enum KeysCommand: BoardlessCommand {
  static let name = "keys"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "print the board's NCMB application and client keys (--rotate: make new ones)",
      "ボードの NCMB アプリケーションキーとクライアントキーを表示 (--rotate で新しくする)"),
    parameters: [db, rotate])

  static let db = databaseOption
  static let rotate = Flag(
    "rotate",
    help: Localized(
      "make new keys (apps holding the old ones are refused)",
      "新しいキーを作る (古いキーのアプリは拒否される)"))

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    let keys = try Datastore.open(boardsHostLocation(invocation[db], options: options))
      .applicationKeys(
        rotate: invocation[rotate])
    if options.json || invocation[GlobalOptions.jsonFlag] {
      print(keys.json.jsonText())
    } else {
      // The keys are the board's text: whoever holds the file may have written anything there.
      print(
        "applicationKey: \(SafeText.sanitize(keys.applicationKey))\n"
          + "clientKey: \(SafeText.sanitize(keys.clientKey))")
    }
    return 0
  }
}
