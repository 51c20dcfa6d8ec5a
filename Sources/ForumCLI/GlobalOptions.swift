import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// How to draw images: detect, force a protocol, half-blocks only, or never.
enum ImageMode: String, CaseIterable, ArgumentValue {
  case auto, kitty, iterm, blocks, none

  static var valueName: String { allCases.map(\.rawValue).joined(separator: "|") }
  static var completion: Completion { .words(allCases.map(\.rawValue)) }
  init(parsing word: String, messages: Messages) throws {
    guard let mode = ImageMode(rawValue: word) else {
      throw CLIError.usage(messages.imagesTakes)
    }
    self = mode
  }
}

/// Options that apply to the whole run, given before the command (or in the environment).
struct GlobalOptions {
  var databasePath: String?
  var profile: String
  /// True when the profile was named (`--profile`, `$FORUM_PROFILE`), so it may be mistyped.
  var profileNamed = false
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
  /// Set when the run is a member's through the ssh door: no file of this machine is read or
  /// written for them, and their key's budget and bans apply.
  var door: SSHDoor?

  static let db = Option<String>(
    "db", value: "PATH|URI",
    help: Localized(
      "the board: an SQLite file, postgresql://…, or https://… (env FORUM_DB)",
      "掲示板: SQLite ファイル、postgresql://…、https://… (環境変数 FORUM_DB)"),
    completion: .files)
  static let profileOption = Option<String>(
    "profile", value: "NAME",
    help: Localized(
      "who you are on the board (env FORUM_PROFILE)", "掲示板での自分 (環境変数 FORUM_PROFILE)"))
  static let jsonFlag = Flag(
    "json", help: Localized("print what the REST API would", "REST API と同じ JSON を出力"))
  static let noColorFlag = Flag(
    "no-color", aliases: ["no-colour"],
    help: Localized("no colour (also NO_COLOR)", "色を付けない (NO_COLOR でも)"))
  static let bailFlag = Flag(
    "bail",
    help: Localized("a script stops at its first failure", "スクリプトは最初の失敗で止まる"))
  static let imagesOption = Option<ImageMode>(
    "images", help: Localized("how images are drawn", "画像の表示方法"))
  static let noPagerFlag = Flag(
    "no-pager", help: Localized("never page long output", "長い出力をページャに渡さない"))
  static let helpFlag = Flag(
    "help", aliases: ["h"], help: Localized("this help", "このヘルプ"))
  static let versionFlag = Flag(
    "version", help: Localized("the version", "バージョン"))

  /// The options of the whole run, in the order help lists them: the one list usage, help,
  /// completion and the parse below are made from.
  static let declared: [OptionDeclaration] = [
    db.declaration, profileOption.declaration, jsonFlag.declaration, noColorFlag.declaration,
    bailFlag.declaration, imagesOption.declaration, noPagerFlag.declaration,
    helpFlag.declaration, versionFlag.declaration,
  ]

  /// The global options every command also takes after its name (`list --json`).
  static let perCommand: [OptionDeclaration] = [
    jsonFlag.declaration, noColorFlag.declaration, helpFlag.declaration,
  ]

  /// `usage: forum [OPTIONS] [COMMAND …]`, then one line per option.
  static func usage(japanese: Bool, width: Int) -> [String] {
    var lines = [japanese ? "使い方: forum [オプション] [コマンド …]" : "usage: forum [OPTIONS] [COMMAND …]"]
    lines.append(japanese ? "オプション:" : "Options:")
    lines += HelpTable.render(
      declared.map { option in
        (
          ([option.usage] + option.aliases.map { ($0.count == 1 ? "-" : "--") + $0 })
            .joined(separator: ", "), option.help.text(japanese: japanese)
        )
      }, width: width)
    return lines
  }

  /// Reads the global options from the front of `arguments`; the first other word starts the
  /// command.
  init(
    arguments: [String], environment: [String: String],
    messages: Messages = Messages(japanese: false)
  ) throws {
    self.environment = environment
    databasePath = environment["FORUM_DB"].flatMap { $0.isEmpty ? nil : $0 }
    profile = environment["FORUM_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
    profileNamed = profile != "default"
    var index = 0
    while index < arguments.count {
      let word = arguments[index]
      guard word.hasPrefix("-"), word.count > 1 else { break }
      var name = String(word.drop { $0 == "-" })
      var inline: String?
      if let equals = name.firstIndex(of: "=") {
        inline = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      guard let option = Self.declared.first(where: { $0.spellings.contains(name) }),
        option.takesValue || inline == nil
      else {
        throw CLIError.usage(
          messages.unknownGlobalOption(
            SafeText.sanitize(word),
            suggestion: CommandRegistry.suggestion(for: name, among: Self.declared.map(\.name))
              .map { "--" + $0 }))
      }
      index += 1
      var value: Any = true
      if let parse = option.parse {
        // `--db --json` is a forgotten value, not a database named "--json".
        var text = inline
        if text == nil, index < arguments.count, !arguments[index].hasPrefix("--") {
          text = arguments[index]
          index += 1
        }
        guard let text else { throw CLIError.usage(messages.needsValue("--" + option.name)) }
        value = try parse(text, messages)
      }
      switch option.name {
      case Self.db.name: databasePath = value as? String
      case Self.profileOption.name:
        profile = value as? String ?? profile
        profileNamed = profile != "default"
      case Self.imagesOption.name: images = value as? ImageMode ?? images
      case Self.jsonFlag.name: json = true
      case Self.bailFlag.name: bail = true
      case Self.noPagerFlag.name: noPager = true
      case Self.noColorFlag.name: noColor = true
      case Self.helpFlag.name: showHelp = true
      case Self.versionFlag.name: showVersion = true
      default: break
      }
    }
    command = Array(arguments[index...])
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
