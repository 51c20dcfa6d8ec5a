/// A command as it arrived: a line typed or read from a script, or the words the shell passed.
/// Each word keeps the text from its start to the end of the line, so a command whose last
/// argument is prose can take that prose byte for byte.
struct CommandWords {
  struct Word: Equatable {
    /// The word with quotes and backslashes resolved; nil when its quote is never closed.
    let value: String?
    /// The line from this word's first character to its end, untouched (the line's own
    /// storage: a word's copy of it was a piped comment's largest cost here).
    let rest: Substring
  }

  let words: [Word]

  /// Splits a line the way a shell does for simple cases: blanks separate, 'single' and
  /// "double" quotes group, a backslash escapes the next character. An unclosed quote makes
  /// the last word, whose value is nil (only an error where a word, not prose, is expected).
  init(line: String) {
    words = Self.asciiWords(line) ?? Self.characterWords(line)
  }

  /// `init(line:)` on the line's characters.
  static func characterWords(_ line: String) -> [Word] {
    var words: [Word] = []
    var index = line.startIndex
    while index < line.endIndex {
      while index < line.endIndex, line[index] == " " || line[index] == "\t" {
        index = line.index(after: index)
      }
      guard index < line.endIndex else { break }
      let start = index
      var value = ""
      var quote: Character?
      var escaped = false
      while index < line.endIndex {
        let character = line[index]
        if escaped {
          value.append(character)
          escaped = false
        } else if character == "\\" && quote != "'" {
          escaped = true
        } else if let open = quote {
          if character == open { quote = nil } else { value.append(character) }
        } else if character == "'" || character == "\"" {
          quote = character
        } else if character == " " || character == "\t" {
          break
        } else {
          value.append(character)
        }
        index = line.index(after: index)
      }
      if escaped { value.append("\\") }
      words.append(Word(value: quote == nil ? value : nil, rest: line[start...]))
    }
    return words
  }

  /// `init(line:)` of a line all ASCII, on its bytes: each byte is a character there, and
  /// walking `Character`s (grapheme breaking) was most of a piped command's own cost. Nil for a
  /// line with any other byte.
  static func asciiWords(_ line: String) -> [Word]? {
    let bytes = Array(line.utf8)
    guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
    let (space, tab, backslash, single, double) = (
      UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\\"), UInt8(ascii: "'"),
      UInt8(ascii: "\"")
    )
    func text(_ slice: ArraySlice<UInt8>) -> String { String(decoding: slice, as: UTF8.self) }
    var words: [Word] = []
    var index = 0
    while index < bytes.count {
      while index < bytes.count, bytes[index] == space || bytes[index] == tab { index += 1 }
      guard index < bytes.count else { break }
      let start = index
      var value: [UInt8] = []
      var quote: UInt8?
      var escaped = false
      while index < bytes.count {
        let byte = bytes[index]
        if escaped {
          value.append(byte)
          escaped = false
        } else if byte == backslash && quote != single {
          escaped = true
        } else if let open = quote {
          if byte == open { quote = nil } else { value.append(byte) }
        } else if byte == single || byte == double {
          quote = byte
        } else if byte == space || byte == tab {
          break
        } else {
          value.append(byte)
        }
        index += 1
      }
      if escaped { value.append(backslash) }
      let restStart = line.utf8.index(line.utf8.startIndex, offsetBy: start)
      words.append(Word(value: quote == nil ? text(value[...]) : nil, rest: line[restStart...]))
    }
    return words
  }

  /// The shell already split these; prose made of several of them is joined with one space.
  init(arguments: [String]) {
    words = arguments.indices.map {
      Word(value: arguments[$0], rest: Substring(arguments[$0...].joined(separator: " ")))
    }
  }

  var first: String? { words.first?.value }

  /// The words split on blanks alone, quotes ignored: for deciding, without failing, which
  /// lines a command would read.
  var roughWords: [String] {
    words.first?.rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) ?? []
  }
}
