import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// How to draw images: detect, force a protocol, half-blocks only, or never.
enum ImageMode: String {
  case auto, kitty, iterm, blocks, none
}

/// Options that apply to the whole run, given before the command (or in the environment).
struct GlobalOptions {
  var databasePath: String?
  var profile: String
  var json = false
  var noColor = false
  var images = ImageMode.auto
  var showHelp = false
  var showVersion = false
  /// `--bail`: a script stops at its first failing line.
  var bail = false
  /// `--no-pager`: long output at a terminal is printed, not paged.
  var noPager = false
  var environment: [String: String]
  /// The command and its words, when given on the command line.
  var command: [String] = []

  /// One option of the whole run, as help lists it.
  struct Declared {
    let name: String
    /// What its value is called, when it takes one.
    let value: Localized?
    let summary: Localized
  }

  /// The options of the whole run, in the order help lists them.
  static let declared: [Declared] = [
    Declared(
      name: "db", value: Localized("PATH|URI", "パス|URI"),
      summary: Localized(
        "the board: an SQLite file, postgresql://…, or https://… (env FORUM_DB)",
        "掲示板: SQLite ファイル、postgresql://…、https://… (環境変数 FORUM_DB)")),
    Declared(
      name: "profile", value: Localized("NAME", "名前"),
      summary: Localized(
        "who you are on the board (env FORUM_PROFILE)", "掲示板での自分 (環境変数 FORUM_PROFILE)")),
    Declared(
      name: "json", value: nil,
      summary: Localized("print what the REST API would", "REST API と同じ JSON を出力")),
    Declared(
      name: "no-color", value: nil,
      summary: Localized("no colour (also NO_COLOR)", "色を付けない (NO_COLOR でも)")),
    Declared(
      name: "bail", value: nil,
      summary: Localized("a script stops at its first failure", "スクリプトは最初の失敗で止まる")),
    Declared(
      name: "images",
      value: Localized("auto|kitty|iterm|blocks|none", "auto|kitty|iterm|blocks|none"),
      summary: Localized("how images are drawn", "画像の表示方法")),
    Declared(
      name: "no-pager", value: nil,
      summary: Localized("never page long output", "長い出力をページャに渡さない")),
    Declared(name: "help", value: nil, summary: Localized("this help", "このヘルプ")),
    Declared(name: "version", value: nil, summary: Localized("the version", "バージョン")),
  ]

  /// Reads `--db`, `--profile`, `--json`, `--no-color`, `--images`, `--help`, `--version` from the
  /// front of `arguments`; the first other word starts the command.
  init(arguments: [String], environment: [String: String]) throws {
    self.environment = environment
    databasePath = environment["FORUM_DB"].flatMap { $0.isEmpty ? nil : $0 }
    profile = environment["FORUM_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
    var index = 0
    func value(_ name: String) throws -> String {
      // `--db --json` is a forgotten value, not a database named "--json".
      guard index < arguments.count, !arguments[index].hasPrefix("--") else {
        throw CLIError.usage("--\(name) needs a value")
      }
      index += 1
      return arguments[index - 1]
    }
    while index < arguments.count {
      var word = arguments[index]
      var inline: String?
      if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
        inline = String(word[word.index(after: equals)...])
        word = String(word[..<equals])
      }
      index += 1
      switch word {
      case "--db": databasePath = try inline ?? value("db")
      case "--profile": profile = try inline ?? value("profile")
      case "--images":
        let text = try inline ?? value("images")
        guard let mode = ImageMode(rawValue: text) else {
          throw CLIError.usage("--images takes auto, kitty, iterm, blocks or none")
        }
        images = mode
      case "--json": json = true
      case "--bail": bail = true
      case "--no-pager": noPager = true
      case "--no-color", "--no-colour": noColor = true
      case "--help", "-h": showHelp = true
      case "--version": showVersion = true
      default:
        if word.hasPrefix("-") && command.isEmpty {
          throw CLIError.usage("unknown option \(SafeText.sanitize(word)); see forum --help")
        }
        command = Array(arguments[(index - 1)...])
        return
      }
    }
  }

  /// `--db`, `$FORUM_DB`, or `$XDG_DATA_HOME/forum/forum.sqlite` (created on first use).
  func resolvedDatabasePath() -> String {
    if let databasePath { return ImageFile.expandTilde(databasePath) }
    let base =
      environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? ((environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path)
        + "/.local/share")
    let directory = base + "/forum"
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    return directory + "/forum.sqlite"
  }

  /// `$XDG_STATE_HOME/forum/history`.
  var historyPath: String { stateDirectory + "/history" }

  /// `$XDG_STATE_HOME/forum/drafts`: what was typed and not yet posted.
  var draftsDirectory: String { stateDirectory + "/drafts" }

  private var stateDirectory: String {
    let base =
      environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? ((environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path)
        + "/.local/state")
    return base + "/forum"
  }
}
