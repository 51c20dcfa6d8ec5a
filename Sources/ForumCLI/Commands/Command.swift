import Datastore
import Forum

/// A command people type, at the prompt, in a script or after `forum`: one type each, owning its
/// name, options, arguments, help, completion and what it does. Help, usage errors and completion
/// are all made from these declarations.
protocol ForumCommand {
  /// The word that runs it and its other spellings: apart from `info`, so that finding the
  /// command a line names builds no other command's declaration (a status bar's `unread
  /// --count` paid for `list`'s, `show`'s and `search`'s on every run). `info` takes them.
  static var name: String { get }
  static var aliases: [String] { get }
  static var info: CommandInfo { get }
  /// What a script must skip when the command is refused before it has read its draft: the
  /// lines it would have read, decided from the line alone without failing.
  static func draftParts(_ words: CommandWords) -> [DraftPart]
  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome
  /// The command as a `BoardlessCommand`, nil for one that needs a board: asked of the type
  /// rather than cast (`as? any BoardlessCommand.Type`), since a cast that fails searches every
  /// protocol conformance in the binary, at each start.
  static var boardless: (any BoardlessCommand.Type)? { get }
}

extension ForumCommand {
  static var aliases: [String] { [] }
  static func draftParts(_ words: CommandWords) -> [DraftPart] { [] }
  static var boardless: (any BoardlessCommand.Type)? { nil }
}

/// A command that runs before any sign-in (`init`, `keys`, `serve`): only from the command line,
/// its words parsed by the same declarations. Returns the exit status.
protocol BoardlessCommand: ForumCommand {
  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
}

extension BoardlessCommand {
  static var boardless: (any BoardlessCommand.Type)? { self }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    throw CLIError.usage(session.messages.onlyFromCommandLine(info.name))
  }

  /// `--db` after the command (the form every "no forum schema" error names) wins over the
  /// global one.
  static func location(_ given: String?, options: GlobalOptions) -> String {
    guard let given, !given.isEmpty else { return options.resolvedDatabasePath() }
    return ImageFile.expandTilde(given)
  }

  /// The location of an owner's tool, which runs where the board is: an https board is refused
  /// in one line before anything is read.
  static func boardsHostLocation(_ given: String?, options: GlobalOptions) throws -> String {
    let location = location(given, options: options)
    try Datastore.requireBoardsHost(info.name, location: location)
    return location
  }

  static var databaseOption: Option<String> {
    Option<String>(
      "db", value: "PATH|URI",
      help: Localized(
        "the board (wins over the global --db)", "掲示板 (グローバルな --db より優先)"),
      completion: .files)
  }
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

/// The declaration of a command: what it is called, what it takes (in the order its usage shows),
/// what help says about it. Usage, help, completion and the parse are all made from it.
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

  let name: String
  var aliases: [String] = []
  let summary: Localized
  var details: Localized?
  let parameters: [Parameter]
  /// The usage line shows `[options]` for the optional options (help lists them below), so it
  /// fits one line of the overview.
  var collapsesOptions = false

  init(
    name: String, aliases: [String] = [], summary: Localized, details: Localized? = nil,
    parameters: [any ParameterConvertible] = [], collapsesOptions: Bool = false
  ) {
    self.name = name
    self.aliases = aliases
    self.summary = summary
    self.details = details
    self.parameters = parameters.map(\.parameter)
    self.collapsesOptions = collapsesOptions
  }

  /// `list [--unread] [--page N|last]`, from the parameters.
  var usage: String {
    var parts = [name]
    for parameter in parameters {
      if collapsesOptions, case .option(_, required: false) = parameter {
        if parts.last != "[options]" { parts.append("[options]") }
        continue
      }
      parts.append(parameter.usage)
    }
    return parts.joined(separator: " ")
  }

  /// The command's own options and flags (the global ones it also takes are `GlobalOptions`').
  var options: [OptionDeclaration] {
    parameters.compactMap {
      if case .option(let option, _) = $0 { return option }
      return nil
    }
  }

  var arguments: [ArgumentDeclaration] {
    parameters.compactMap {
      if case .argument(let argument) = $0 { return argument }
      return nil
    }
  }

  var text: Text? {
    for case .text(let text) in parameters { return text.kind }
    return nil
  }

  /// How many positional words the command takes.
  var argumentCount: ClosedRange<Int> {
    let required = arguments.filter { !$0.optional }.count
    return required...max(required, arguments.reduce(0) { $0 + $1.maximum })
  }

  /// The option (or a global one a command takes, such as `--json`) spelled `name`.
  func option(named name: String) -> OptionDeclaration? {
    (options + GlobalOptions.perCommand).first { $0.spellings.contains(name) }
  }

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
    var table: [(String, String)] = []
    for parameter in parameters {
      switch parameter {
      case .option(let option, _):
        let spelled = ([option.usage] + option.aliases.map { ($0.count == 1 ? "-" : "--") + $0 })
        table.append((spelled.joined(separator: ", "), option.help.text(japanese: japanese)))
      case .argument(let argument):
        if let help = argument.help {
          table.append((argument.label, help.text(japanese: japanese)))
        }
      case .text: break
      }
    }
    if !table.isEmpty {
      lines.append(japanese ? "オプションと引数:" : "Options and arguments:")
      lines += HelpTable.render(table, width: width)
    }
    return lines.joined(separator: "\n")
  }
}

/// Two columns: a name and its help, wrapped under itself when the name is long.
enum HelpTable {
  static func render(_ rows: [(String, String)], width: Int) -> [String] {
    var column = min(rows.map { SafeText.width($0.0) }.max() ?? 0, 24)
    var helpWidth = width - column - 6
    if helpWidth < 24 {
      // Narrow: each help goes under its name.
      column = 0
      helpWidth = max(20, width - 6)
    }
    var lines: [String] = []
    for (name, help) in rows {
      let wrapped = SafeText.wrap(help, to: helpWidth)
      if SafeText.width(name) > column {
        lines.append("  " + name)
        lines += wrapped.map { String(repeating: " ", count: column + 6) + $0 }
      } else {
        lines.append("  " + SafeText.pad(name, to: column) + "    " + (wrapped.first ?? ""))
        lines += wrapped.dropFirst().map { String(repeating: " ", count: column + 6) + $0 }
      }
    }
    return lines
  }
}

/// A command's words sorted into positionals, options, flags and prose.
struct Invocation {
  /// The positional words as typed; `self[argument]` is their parsed value.
  private(set) var positionals: [String] = []
  /// Option values as typed, by the option's name; `self[option]` is the parsed value.
  private(set) var options: [String: String] = [:]
  /// The flags given, by name (an alias counts as its flag).
  private(set) var flags: Set<String> = []
  /// The prose of a text command ("" when the line has none and a draft is to be read).
  var text: String?
  /// Parsed values by option name and by argument label, made by `resolve`.
  private var values: [String: Any] = [:]
  private var argumentValues: [String: [Any]] = [:]

  private init() {}

  subscript(flag: Flag) -> Bool { flags.contains(flag.name) }

  subscript<Value>(option: Option<Value>) -> Value? { values[option.name] as? Value }

  /// A single argument's value (nil when an optional one is not given).
  subscript<Value>(argument: Argument<Value>) -> Value? {
    argumentValues[argument.declaration.label]?.first as? Value
  }

  /// Every word an argument took.
  func all<Value>(_ argument: Argument<Value>) -> [Value] {
    (argumentValues[argument.declaration.label] ?? []).compactMap { $0 as? Value }
  }

  /// Whether any of the command's own options (not flags) was given.
  var anyOptionGiven: Bool { !options.isEmpty }

  /// Whether the option was on the line, even where its value is not parsed (a refused line's
  /// draft is decided from the words alone).
  func given<Value>(_ option: Option<Value>) -> Bool { options[option.name] != nil }

  /// Parses every option value and positional word by its declaration: a bad one is a usage
  /// error before the command does anything.
  mutating func resolve(_ info: CommandInfo, messages: Messages) throws {
    for (name, text) in options {
      guard let parse = info.option(named: name)?.parse else { continue }
      values[name] = try parse(text, messages)
    }
    var words = positionals[...]
    for argument in info.arguments {
      var taken: [Any] = []
      while taken.count < argument.maximum, let word = words.first {
        taken.append(try argument.parse(word, messages))
        words = words.dropFirst()
      }
      argumentValues[argument.label] = taken
    }
  }

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
    text = String(first.rest)
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
    guard let declared = info.option(named: name) else {
      let names = (info.options + GlobalOptions.perCommand).map(\.name)
      throw CLIError.usage(
        messages.unknownOption(
          SafeText.sanitize(value),
          suggestion: CommandRegistry.suggestion(for: name, among: names).map { "--" + $0 }))
    }
    name = declared.name
    if !declared.takesValue {
      guard inlineValue == nil else {
        throw CLIError.usage(messages.unknownOption(SafeText.sanitize(value)))
      }
      flags.insert(name)
      return
    }
    if let inlineValue {
      options[name] = inlineValue
    } else if index < all.count, all[index].value == nil {
      // A value whose quote is never closed is still a value given.
      guard lenient else { throw CLIError.usage(messages.unclosedQuote) }
      options[name] = String(all[index].rest)
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
    info.option(named: String(word.dropFirst(2).prefix { $0 != "=" })) != nil
  }

  /// Every word is a known option or the value after one (`--title T --edit`).
  private static func allOptions(_ words: [CommandWords.Word], _ info: CommandInfo) -> Bool {
    var index = 0
    while index < words.count {
      guard let value = words[index].value, looksLikeOption(value), isKnown(value, info) else {
        return false
      }
      index += 1
      if !value.contains("="), info.option(named: String(value.dropFirst(2)))?.takesValue == true,
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
