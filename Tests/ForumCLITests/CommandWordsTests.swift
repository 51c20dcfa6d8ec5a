import Testing

@testable import ForumCLI

/// A line of ASCII is split on its bytes (`CommandWords.asciiWords`), the rest on characters:
/// the two give the same words for every line both can split.
@Suite("splitting a command line")
struct CommandWordsTests {
  /// Lines of blanks, quotes, backslashes, letters and CR, built from a fixed seed.
  static func lines(count: Int) -> [String] {
    let alphabet: [Character] = [" ", " ", "\t", "'", "\"", "\\", "a", "b", "#", "\r", "\n", "-"]
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(state >> 33)
    }
    return (0..<count).map { _ in
      String((0..<(next() % 24)).map { _ in alphabet[next() % alphabet.count] })
    }
  }

  @Test func bytesAndCharactersSplitAlike() throws {
    for line in Self.lines(count: 20_000) {
      let bytes = try #require(CommandWords.asciiWords(line))
      #expect(bytes == CommandWords.characterWords(line), "\(line.debugDescription)")
    }
  }

  @Test func aLineWithOtherBytesIsSplitOnItsCharacters() {
    #expect(CommandWords.asciiWords("comment 3 \"e\u{301}\" ok") == nil)
    let words = CommandWords(line: "say 'ü' \\é \"a b\"")
    #expect(words.words.map(\.value) == ["say", "ü", "é", "a b"])
    // A quote carrying a combining mark is another character, not a quote.
    #expect(CommandWords(line: "x \"\u{301}y").words.map(\.value) == ["x", "\"\u{301}y"])
  }
}
