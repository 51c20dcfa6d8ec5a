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

  /// Sorts `words` (the command word first) by `info`. `insideThread`: at the prompt with a
  /// current thread, where a bare number starts the prose instead of naming a thread.
  init(_ words: CommandWords, info: CommandInfo, insideThread: Bool, messages: Messages) throws {
    let known = Set(info.options)
    let knownFlags = Set(info.flags + CommandInfo.commonFlags)
    var index = 1
    var onlyPositionals = false
    let all = words.words
    while index < all.count {
      let word = all[index]
      index += 1
      guard let value = word.value else {
        if info.text != nil {
          text = word.rest
          break
        }
        throw CLIError.usage(messages.unclosedQuote)
      }
      if !onlyPositionals && value.hasPrefix("-") && value.count > 1
        && !Invocation.isNegativeNumber(value)
      {
        if value == "--" && info.text == nil {
          onlyPositionals = true
          continue
        }
        var name = String(value.drop(while: { $0 == "-" }))
        var inlineValue: String?
        if let equals = name.firstIndex(of: "=") {
          inlineValue = String(name[name.index(after: equals)...])
          name = String(name[..<equals])
        }
        if knownFlags.contains(name), inlineValue == nil {
          flags.insert(name)
          continue
        }
        if known.contains(name) {
          if let inlineValue {
            options[name] = inlineValue
          } else if index < all.count, all[index].value == nil {
            throw CLIError.usage(messages.unclosedQuote)
          } else if index < all.count, let next = all[index].value, !next.hasPrefix("--") {
            options[name] = next
            index += 1
          } else {
            throw CLIError.usage(messages.needsValue("--" + name))
          }
          continue
        }
        if info.text == nil {
          throw CLIError.usage(messages.unknownOption(SafeText.sanitize(value)))
        }
      }
      if let kind = info.text {
        if kind == .afterHandle, positionals.isEmpty, value.hasPrefix("@") {
          positionals.append(value)
          continue
        }
        if kind == .afterReference, positionals.isEmpty {
          positionals.append(value)
          continue
        }
        if kind == .afterThread, positionals.isEmpty,
          Invocation.isThreadWord(value, bareNumber: !insideThread)
        {
          positionals.append(value)
          continue
        }
        text = word.rest
        break
      }
      positionals.append(value)
    }
    if info.text != nil && text == nil { text = "" }
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
