import Datastore

/// Every command, in the order help lists them, and what is made from their declarations:
/// lookup with suggestions, the overview, one command's help.
enum CommandRegistry {
  static let all: [any ForumCommand.Type] =
    [
      ListCommand.self, ShowCommand.self, SearchCommand.self, NextCommand.self,
      PreviousCommand.self, UnreadCommand.self, ReadCommand.self, NewCommand.self,
      CommentCommand.self, ReplyCommand.self, ChatCommand.self, EditCommand.self,
      HistoryCommand.self, DeleteCommand.self, ImageCommand.self, DMCommand.self,
      InboxCommand.self, MuteCommand.self, UnmuteCommand.self, FollowCommand.self,
      UnfollowCommand.self,
    ] + FlagCommand.commands + [
      ModCommand.self, WhoCommand.self, WhoamiCommand.self, NameCommand.self, LeaveCommand.self,
      HelpCommand.self,
      QuitCommand.self, InitCommand.self, KeysCommand.self, IndexCommand.self, ImportCommand.self,
      ServeCommand.self, SSHSetupCommand.self, SSHKeysCommand.self, SSHSessionCommand.self,
    ]

  static var names: [String] { all.map { $0.name } }

  /// The command `word` names, or its alias (by the names alone: no declaration is built).
  static func named(_ word: String) -> (any ForumCommand.Type)? {
    let word = word.lowercased()
    return all.first { $0.name == word || $0.aliases.contains(word) }
  }

  /// The command `word` names; a usage error suggesting the nearest command otherwise.
  static func lookup(_ word: String, messages: Messages) throws -> any ForumCommand.Type {
    guard let command = named(word) else {
      throw CLIError.usage(
        messages.unknownCommand(SafeText.sanitize(word), suggestion: suggestion(for: word)))
    }
    return command
  }

  /// What `help [TOPIC]` prints, fitted to `width` columns.
  static func help(topic: String?, japanese: Bool, width: Int) throws -> String {
    guard let topic else { return overview(japanese: japanese, width: width) }
    return try lookup(topic, messages: Messages(japanese: japanese)).info.help(
      japanese: japanese, width: width)
  }

  /// One line a command (wrapped under its usage when the terminal is narrow), then the
  /// global options; `usage`: the program's usage line first (`forum --help`).
  static func overview(japanese: Bool, width: Int, usage: Bool = false) -> String {
    let infos = all.map { $0.info }
    let global = GlobalOptions.usage(japanese: japanese, width: width)
    var lines: [String] = usage ? [global[0], ""] : []
    // Long usages go on a line of their own rather than push every summary to the right.
    let column = min(infos.map { SafeText.width($0.usage) }.max() ?? 0, 32)
    lines.append(japanese ? "コマンド:" : "Commands:")
    let summaryWidth = width - column - 4
    for info in infos {
      let summary = info.summary.text(japanese: japanese)
      let usageWidth = SafeText.width(info.usage)
      if summaryWidth >= 24 && usageWidth > column {
        lines += SafeText.wrap(info.usage, to: width - 2).map { "  " + $0 }
        lines += SafeText.wrap(summary, to: summaryWidth).map {
          String(repeating: " ", count: column + 4) + $0
        }
      } else if summaryWidth >= 24 {
        let wrapped = SafeText.wrap(summary, to: summaryWidth)
        lines.append("  " + SafeText.pad(info.usage, to: column) + "  " + wrapped[0])
        for more in wrapped.dropFirst() {
          lines.append(String(repeating: " ", count: column + 4) + more)
        }
      } else {
        lines += SafeText.wrap(info.usage, to: max(20, width - 2)).map { "  " + $0 }
        lines += SafeText.wrap(summary, to: max(20, width - 6)).map { "      " + $0 }
      }
    }
    lines.append("")
    lines += global.dropFirst()
    return lines.joined(separator: "\n")
  }

  /// What `--json help [TOPIC]` prints: the declarations themselves.
  static func helpJSON(topic: String?, japanese: Bool) throws -> JSONValue {
    func describe(_ option: OptionDeclaration) -> JSONValue {
      var object: [String: JSONValue] = [
        "name": .string("--" + option.name),
        "summary": .string(option.help.text(japanese: japanese)),
      ]
      if let value = option.valueName { object["value"] = .string(value) }
      if !option.aliases.isEmpty {
        object["aliases"] = .array(
          option.aliases.map { .string(($0.count == 1 ? "-" : "--") + $0) })
      }
      return .object(object)
    }
    func describe(_ info: CommandInfo, details: Bool) -> JSONValue {
      var object: [String: JSONValue] = [
        "name": .string(info.name), "aliases": .array(info.aliases.map { .string($0) }),
        "usage": .string(info.usage), "summary": .string(info.summary.text(japanese: japanese)),
        "options": .array(info.options.filter(\.takesValue).map { .string("--" + $0.name) }),
        "flags": .array(info.options.filter { !$0.takesValue }.map { .string("--" + $0.name) }),
      ]
      if details {
        object["details"] = .string(info.details?.text(japanese: japanese) ?? "")
        object["parameters"] = .array(info.options.map(describe))
      }
      return .object(object)
    }
    if let topic {
      return describe(try lookup(topic, messages: Messages(japanese: japanese)).info, details: true)
    }
    return .object([
      "results": .array(all.map { describe($0.info, details: false) }),
      "options": .array(GlobalOptions.declared.map(describe)),
    ])
  }

  /// The command nearest to a mistyped word, if any is close.
  static func suggestion(for word: String) -> String? {
    suggestion(for: word, among: names)
  }

  /// The name nearest to a mistyped word, if any is close (commands, or a command's options).
  static func suggestion(for word: String, among names: [String]) -> String? {
    // Ties go to the name that starts with the same letter ("hepl" is help, not reply).
    let scored = names.map {
      ($0, 2 * editDistance($0, word.lowercased()) + ($0.first == word.lowercased().first ? 0 : 1))
    }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 / 2 <= max(1, word.count / 2) else {
      return names.first { $0.hasPrefix(word.lowercased()) && !word.isEmpty }
    }
    return best.0
  }

  private static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    var row = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
      var previous = row[0]
      row[0] = i
      for j in stride(from: 1, through: b.count, by: 1) {
        let saved = row[j]
        row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
        previous = saved
      }
    }
    return row[b.count]
  }
}
