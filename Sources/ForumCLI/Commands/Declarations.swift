/// The parts a command declares (after swift-argument-parser's `@Option`, `@Flag`, `@Argument`),
/// each owning its name, its help in English and Japanese and what Tab offers for it. Usage lines,
/// help, completion and the parse itself are made from these; nothing about a parameter is
/// written anywhere else. (The package itself is not used: it would cost every start.)

/// What Tab offers for a word.
enum Completion: Equatable {
  case none
  case threads
  case handles
  case files
  case commands
  case words([String])
}

/// A value that parses itself from one word of the line; a bad word is a usage error.
protocol ArgumentValue {
  /// What usage and help call it (`N|last`), unless the declaration names it otherwise.
  static var valueName: String { get }
  static var completion: Completion { get }
  init(parsing word: String, messages: Messages) throws
}

extension ArgumentValue {
  static var completion: Completion { .none }
}

extension String: ArgumentValue {
  static var valueName: String { "TEXT" }
  init(parsing word: String, messages: Messages) throws { self = word }
}

/// A positive number (`--thread 12`, `#12`).
struct ThreadNumber: ArgumentValue, Equatable {
  let number: Int
  static var valueName: String { "THREAD" }
  static var completion: Completion { .threads }
  init(parsing word: String, messages: Messages) throws {
    number = try PositiveNumber.parse(
      word.hasPrefix("#") ? String(word.dropFirst()) : word, "thread", messages)
  }
}

enum PositiveNumber {
  static func parse(_ text: String, _ what: String, _ messages: Messages) throws -> Int {
    guard let number = Int(text), number > 0 else {
      throw CLIError.usage(messages.notANumber(what, SafeText.sanitize(text)))
    }
    return number
  }
}

/// A page: a number from 1, or `last`.
enum PageRequest: ArgumentValue, Equatable {
  case number(Int)
  case last
  static var valueName: String { "N|last" }
  static var completion: Completion { .words(["last"]) }
  init(parsing word: String, messages: Messages) throws {
    self = word == "last" ? .last : .number(try PositiveNumber.parse(word, "page", messages))
  }

  /// The page number, `last` being `last`.
  func number(last: Int) -> Int {
    switch self {
    case .number(let number): return number
    case .last: return last
    }
  }
}

/// A post as typed: `12`, `#12`, `12/3`, or `/3` (a comment of the current thread at the
/// prompt, resolved by the one who knows it: `Navigation`).
enum PostRef: ArgumentValue, Equatable {
  case thread(Int)
  case comment(Int, Int)
  case currentThreadComment(Int)
  static var valueName: String { "THREAD[/COMMENT]" }
  static var completion: Completion { .threads }
  init(parsing word: String, messages: Messages) throws {
    let parts = word.split(separator: "/", omittingEmptySubsequences: false)
    if parts.count == 2 {
      let number = try PositiveNumber.parse(String(parts[1]), "comment", messages)
      if parts[0].isEmpty {
        self = .currentThreadComment(number)
      } else {
        self = .comment(
          try ThreadNumber(parsing: String(parts[0]), messages: messages).number, number)
      }
      return
    }
    self = .thread(try ThreadNumber(parsing: word, messages: messages).number)
  }
}

/// `@bob` (or `bob`): someone's handle or unique display name, as the board resolves it.
struct Handle: ArgumentValue, Equatable {
  let text: String
  static var valueName: String { "@HANDLE" }
  static var completion: Completion { .handles }
  init(parsing word: String, messages: Messages) throws {
    guard !word.isEmpty, word != "@" else { throw CLIError.usage(messages.whichHandle) }
    text = word
  }
}

/// A path on this machine (`-` where a command allows stdout).
struct FilePath: ArgumentValue, Equatable {
  let path: String
  static var valueName: String { "PATH" }
  static var completion: Completion { .files }
  init(parsing word: String, messages: Messages) throws { path = word }
}

/// One option or flag as declared, whatever its value's type.
struct OptionDeclaration {
  let name: String
  /// Other spellings (without dashes): `y` for `yes`, `no-colour`.
  var aliases: [String] = []
  /// What its value is called (`N|last`); nil for a flag.
  let valueName: String?
  let help: Localized
  let completion: Completion
  /// Parses a value word into the option's type (nil for a flag).
  let parse: (@Sendable (String, Messages) throws -> Any)?

  var takesValue: Bool { valueName != nil }
  var spellings: [String] { [name] + aliases }
  /// `--page N|last`, `--yes`.
  var usage: String { valueName.map { "--\(name) \($0)" } ?? "--\(name)" }
}

/// A positional argument as declared.
struct ArgumentDeclaration {
  let label: String
  let help: Localized?
  let optional: Bool
  /// Takes every remaining word, up to `maximum`.
  let maximum: Int
  let completion: Completion
  let parse: @Sendable (String, Messages) throws -> Any

  var usage: String {
    optional ? "[\(label)]" : label
  }
}

/// `--name`: true when given.
struct Flag {
  let declaration: OptionDeclaration
  init(_ name: String, aliases: [String] = [], help: Localized) {
    declaration = OptionDeclaration(
      name: name, aliases: aliases, valueName: nil, help: help, completion: .none, parse: nil)
  }
  var name: String { declaration.name }
}

/// `--name VALUE`, the value parsed as `Value`.
struct Option<Value: ArgumentValue> {
  let declaration: OptionDeclaration
  /// `required`: usage shows it without brackets (the command says what is missing).
  let required: Bool
  init(
    _ name: String, value: String? = nil, help: Localized, completion: Completion? = nil,
    required: Bool = false, aliases: [String] = []
  ) {
    declaration = OptionDeclaration(
      name: name, aliases: aliases, valueName: value ?? Value.valueName, help: help,
      completion: completion ?? Value.completion,
      parse: { try Value(parsing: $0, messages: $1) })
    self.required = required
  }
  var name: String { declaration.name }
}

/// A positional argument parsed as `Value`.
struct Argument<Value: ArgumentValue> {
  let declaration: ArgumentDeclaration
  init(
    _ label: String? = nil, help: Localized? = nil, optional: Bool = false, maximum: Int = 1,
    completion: Completion? = nil
  ) {
    declaration = ArgumentDeclaration(
      label: label ?? Value.valueName, help: help, optional: optional, maximum: maximum,
      completion: completion ?? Value.completion, parse: { try Value(parsing: $0, messages: $1) })
  }
}

/// The prose after a command's words (`comment 12 TEXT`), taken byte for byte.
struct TextParameter {
  let kind: CommandInfo.Text
  var label = "TEXT"
  var optional = true
}

/// One part of a command's line, in the order its usage shows them.
enum Parameter {
  case option(OptionDeclaration, required: Bool)
  case argument(ArgumentDeclaration)
  case text(TextParameter)

  var usage: String {
    switch self {
    case .option(let option, let required): return required ? option.usage : "[\(option.usage)]"
    case .argument(let argument): return argument.usage
    case .text(let text): return text.optional ? "[\(text.label)]" : text.label
    }
  }
}

/// What a command's parameter list is built from: `[page, unread, thread]`.
protocol ParameterConvertible {
  var parameter: Parameter { get }
}

extension Flag: ParameterConvertible {
  var parameter: Parameter { .option(declaration, required: false) }
}
extension Option: ParameterConvertible {
  var parameter: Parameter { .option(declaration, required: required) }
}
extension Argument: ParameterConvertible {
  var parameter: Parameter { .argument(declaration) }
}
extension TextParameter: ParameterConvertible {
  var parameter: Parameter { .text(self) }
}
