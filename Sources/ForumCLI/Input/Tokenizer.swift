/// Splits a command line into words the way a shell would for simple cases: spaces separate,
/// 'single' and "double" quotes group, a backslash escapes the next character.
enum Tokenizer {
  struct UnclosedQuote: Error {}

  static func words(_ line: String) throws -> [String] {
    var words: [String] = []
    var current = ""
    var inWord = false
    var quote: Character?
    var escaped = false
    for character in line {
      if escaped {
        current.append(character)
        escaped = false
        continue
      }
      if character == "\\" && quote != "'" {
        escaped = true
        inWord = true
        continue
      }
      if let open = quote {
        if character == open { quote = nil } else { current.append(character) }
        continue
      }
      switch character {
      case "'", "\"":
        quote = character
        inWord = true
      case " ", "\t":
        if inWord { words.append(current) }
        current = ""
        inWord = false
      default:
        current.append(character)
        inWord = true
      }
    }
    guard quote == nil else { throw UnclosedQuote() }
    if escaped { current.append("\\") }
    if inWord { words.append(current) }
    return words
  }
}

/// A command's words sorted into positionals, `--option VALUE` pairs and `--flag`s.
struct Arguments {
  var positionals: [String] = []
  var options: [String: String] = [:]
  var flags: Set<String> = []

  /// Parses `words` against the options and flags a command takes; `--name=value` works too.
  /// Anything else starting with `--` is a usage error.
  init(_ words: [String], options known: Set<String>, flags knownFlags: Set<String>) throws {
    var index = 0
    var onlyPositionals = false
    while index < words.count {
      let word = words[index]
      index += 1
      if onlyPositionals || !word.hasPrefix("-") || word == "-" || Arguments.isNegativeNumber(word)
      {
        positionals.append(word)
        continue
      }
      if word == "--" {
        onlyPositionals = true
        continue
      }
      var name = String(word.drop(while: { $0 == "-" }))
      var inlineValue: String?
      if let equals = name.firstIndex(of: "=") {
        inlineValue = String(name[name.index(after: equals)...])
        name = String(name[..<equals])
      }
      if knownFlags.contains(name), inlineValue == nil {
        flags.insert(name)
      } else if known.contains(name) {
        if let inlineValue {
          options[name] = inlineValue
        } else if index < words.count {
          options[name] = words[index]
          index += 1
        } else {
          throw CLIError.usage("--\(name) needs a value")
        }
      } else {
        throw CLIError.usage("unknown option \(word)")
      }
    }
  }

  private static func isNegativeNumber(_ word: String) -> Bool {
    word.count > 1 && word.dropFirst().allSatisfy(\.isNumber)
  }
}
