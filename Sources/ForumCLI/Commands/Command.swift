/// A command people type, at the prompt, in a script or after `forum`: one type each, owning its
/// name, options, arguments, help, completion and what it does. Help, usage errors and completion
/// are all made from these declarations.
protocol ForumCommand {
  static var info: CommandInfo { get }
  /// What a script must skip when the command is refused before it has read its draft: the
  /// lines it would have read, decided from the line alone without failing.
  static func draftParts(_ words: CommandWords) -> [DraftPart]
  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome
}

extension ForumCommand {
  static func draftParts(_ words: CommandWords) -> [DraftPart] { [] }
}

/// Input a command reads after its own line: one answer, lines up to a single `.`, or a room's
/// lines up to `/leave` (or `/back`).
enum DraftPart {
  case line
  case block
  case room
}

/// English and Japanese of one sentence.
struct Localized {
  let english: String
  let japanese: String

  init(_ english: String, _ japanese: String) {
    self.english = english
    self.japanese = japanese
  }

  func text(japanese: Bool) -> String { japanese ? self.japanese : english }
}

/// The declaration of a command: what it is called, what it takes, what help says about it.
struct CommandInfo {
  /// What the last argument is when it is prose.
  enum Text {
    /// The rest of the line after the command's options.
    case rest
    /// The rest of the line after an optional thread (`#N` anywhere; a bare `N` only outside
    /// a thread at the prompt).
    case afterThread
    /// The rest of the line after a leading `@handle` (`dm @bob TEXT`).
    case afterHandle
    /// The rest of the line after the first argument (a reference such as `12/3`) and options.
    case afterReference
  }

  /// What Tab offers for the command's arguments.
  enum Completion {
    case none
    case threads
    case handles
  }

  let name: String
  var aliases: [String] = []
  let usage: String
  let summary: Localized
  var details: Localized?
  /// Options taking a value (`--page N`).
  var options: [String] = []
  var flags: [String] = []
  var arguments: ClosedRange<Int> = 0...0
  var text: Text?
  var completion: Completion = .none

  /// Flags every command takes.
  static let commonFlags = ["json", "no-color", "help"]

  func help(japanese: Bool, width: Int) -> String {
    var lines = SafeText.wrap((japanese ? "使い方: " : "usage: ") + usage, to: max(20, width))
    lines += SafeText.wrap(summary.text(japanese: japanese), to: max(20, width - 2)).map {
      "  " + $0
    }
    if let details {
      lines += SafeText.wrap(details.text(japanese: japanese), to: max(20, width - 2)).map {
        "  " + $0
      }
    }
    return lines.joined(separator: "\n")
  }
}

/// A command's words sorted into positionals, options, flags and prose.
struct Invocation {
  var positionals: [String] = []
  var options: [String: String] = [:]
  var flags: Set<String> = []
  /// The prose of a text command ("" when the line has none and a draft is to be read).
  var text: String?

  private init() {}

  /// Sorts `words` (the command word first) by `info`. `insideThread`: at the prompt with a
  /// current thread, where a bare number starts the prose instead of naming a thread.
  /// `lenient`: for deciding which lines a refused command would have read; an option without
  /// its value or an unknown one is left out instead of refused.
  init(
    _ words: CommandWords, info: CommandInfo, insideThread: Bool, messages: Messages,
    lenient: Bool = false
  ) throws {
    if info.text != nil {
      try self.init(
        text: words, info: info, insideThread: insideThread, messages: messages, lenient: lenient)
      return
    }
    self.init()
    let all = words.words
    var index = 1
    var onlyPositionals = false
    while index < all.count {
      let word = all[index]
      index += 1
      guard let value = word.value else {
        if lenient { continue }
        throw CLIError.usage(messages.unclosedQuote)
      }
      if !onlyPositionals && value.hasPrefix("-") && value.count > 1
        && !Invocation.isNegativeNumber(value)
      {
        if value == "--" {
          onlyPositionals = true
          continue
        }
        do {
          try take(
            option: value, at: &index, in: all, info: info, messages: messages, lenient: lenient)
        } catch  where lenient {
          continue
        }
        continue
      }
      positionals.append(value)
    }
  }

  /// A text command (`comment`, `reply`, `dm`, `name`, `edit`): `COMMAND [OPTIONS] REFERENCE
  /// TEXT`, or `COMMAND [REFERENCE] OPTIONS` with no text. Options never sit inside the text:
  /// the words after the reference are either all options or all text, byte for byte, and
  /// text may not start with what looks like an option (`--json rocks` is refused, not posted
  /// as "rocks" nor as "--json rocks": the line could mean either).
  private init(
    text words: CommandWords, info: CommandInfo, insideThread: Bool, messages: Messages,
    lenient: Bool
  ) throws {
    self.init()
    let all = words.words
    let kind = info.text!
    // Options right after the command count only when a reference follows them.
    var start = 1
    var leading = Invocation()
    var index = 1
    while index < all.count, let value = all[index].value, Invocation.looksLikeOption(value),
      Invocation.isKnown(value, info)
    {
      index += 1
      do {
        try leading.take(option: value, at: &index, in: all, info: info, messages: messages)
      } catch  where lenient {
        continue
      }
    }
    if index > 1, index < all.count,
      let value = all[index].value, Invocation.isReference(value, kind, insideThread)
    {
      self = leading
      start = index
    }
    index = start
    if index < all.count, let value = all[index].value,
      Invocation.isReference(value, kind, insideThread)
    {
      positionals.append(value)
      index += 1
    }
    let rest = Array(all[index...])
    if !rest.isEmpty && Invocation.allOptions(rest, info) {
      var at = index
      while at < all.count {
        let value = all[at].value ?? ""
        at += 1
        do {
          try take(option: value, at: &at, in: all, info: info, messages: messages)
        } catch  where lenient {
          continue
        }
      }
      text = ""
      return
    }
    guard let first = rest.first else {
      text = ""
      return
    }
    if let value = first.value, Invocation.looksLikeOption(value) {
      let name = "--" + value.dropFirst(2).prefix { $0 != "=" }
      throw CLIError.usage(
        Invocation.isKnown(value, info)
          ? messages.optionInsideText(SafeText.sanitize(name), command: info.name)
          : messages.unknownOptionBeforeText(SafeText.sanitize(name), command: info.name))
    }
    text = first.rest
  }

  /// Reads one option word (and its value from the next word when it takes one).
  private mutating func take(
    option value: String, at index: inout Int, in all: [CommandWords.Word], info: CommandInfo,
    messages: Messages, lenient: Bool = false
  ) throws {
    var name = String(value.drop(while: { $0 == "-" }))
    var inlineValue: String?
    if let equals = name.firstIndex(of: "=") {
      inlineValue = String(name[name.index(after: equals)...])
      name = String(name[..<equals])
    }
    if Set(info.flags + CommandInfo.commonFlags).contains(name), inlineValue == nil {
      flags.insert(name)
      return
    }
    guard info.options.contains(name) else {
      throw CLIError.usage(messages.unknownOption(SafeText.sanitize(value)))
    }
    if let inlineValue {
      options[name] = inlineValue
    } else if index < all.count, all[index].value == nil {
      // A value whose quote is never closed is still a value given.
      guard lenient else { throw CLIError.usage(messages.unclosedQuote) }
      options[name] = all[index].rest
      index += 1
    } else if index < all.count, let next = all[index].value, !next.hasPrefix("--") {
      options[name] = next
      index += 1
    } else {
      throw CLIError.usage(messages.needsValue("--" + name))
    }
  }

  /// `--name` or `--name=value` (a lone `--`, `---` or `-> x` is text).
  static func looksLikeOption(_ word: String) -> Bool {
    guard word.hasPrefix("--"), let letter = word.dropFirst(2).first else { return false }
    return letter.isLetter
  }

  private static func isKnown(_ word: String, _ info: CommandInfo) -> Bool {
    let name = String(word.dropFirst(2).prefix { $0 != "=" })
    return info.options.contains(name) || info.flags.contains(name)
      || CommandInfo.commonFlags.contains(name)
  }

  /// Every word is a known option or the value after one (`--title T --edit`).
  private static func allOptions(_ words: [CommandWords.Word], _ info: CommandInfo) -> Bool {
    var index = 0
    while index < words.count {
      guard let value = words[index].value, looksLikeOption(value), isKnown(value, info) else {
        return false
      }
      index += 1
      if !value.contains("="), info.options.contains(String(value.dropFirst(2))),
        index < words.count, let next = words[index].value, !next.hasPrefix("--")
      {
        index += 1
      }
    }
    return true
  }

  private static func isReference(_ word: String, _ kind: CommandInfo.Text, _ inside: Bool)
    -> Bool
  {
    switch kind {
    case .rest: return false
    case .afterHandle: return word.hasPrefix("@")
    case .afterThread: return isThreadWord(word, bareNumber: !inside)
    case .afterReference: return !looksLikeOption(word)
    }
  }

  /// `#12`, or `12` where a bare number names a thread.
  static func isThreadWord(_ word: String, bareNumber: Bool) -> Bool {
    var digits = Substring(word)
    if digits.hasPrefix("#") {
      digits = digits.dropFirst()
    } else if !bareNumber {
      return false
    }
    return !digits.isEmpty && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
  }

  private static func isNegativeNumber(_ word: String) -> Bool {
    word.count > 1 && word.hasPrefix("-") && word.dropFirst().allSatisfy(\.isNumber)
  }
}
