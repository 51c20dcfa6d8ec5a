import Testing

@testable import ForumCLI

/// `list` sanitizes only as much of a description as its line can show (issue #13: a one-shot
/// command does no work beyond what it prints). What shows must not change.
@Suite("sanitizing a prefix")
struct SafeTextPrefixTests {
  static let texts: [String] = [
    String(repeating: "plain ascii words ", count: 300),
    String(repeating: "雨の日は家で映画を見ます。", count: 200),
    "e" + String(repeating: "\u{301}", count: 80) + String(repeating: "x", count: 80),
    String(repeating: "\u{903}", count: 80) + "after spacing marks",
    String(repeating: "\u{200B}", count: 500) + "after zero-width spaces",
    String(repeating: "👨‍👩‍👧‍👦🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", count: 30),
    String(repeating: "\u{1B}[31mred\u{7}\t\r\n\u{85}\u{2028}\u{2029}\u{202E}", count: 40),
    String(repeating: "ｱｲｳ한글e\u{301}🇯🇵", count: 60),
    "short",
    "",
    "a \u{301}b  c\u{600} d\r\ne  \n\n end ",
    String(repeating: "長い文章、", count: 40) + " " + String(repeating: "x", count: 90) + " y\n",
  ]

  @Test("truncating the prefix shows what truncating the whole text shows", arguments: texts)
  func prefixShowsTheSame(text: String) {
    let whole = SafeText.sanitize(text)
    for limit in 1...60 {
      let prefix = SafeText.sanitize(text, stoppingPast: limit)
      // Compared as Bools: the texts are long, and a failure names the limit.
      let isPrefix = whole.unicodeScalars.starts(with: prefix.unicodeScalars)
      #expect(isPrefix, "limit \(limit)")
      let sameLine =
        SafeText.truncate(" — " + prefix, to: limit) == SafeText.truncate(" — " + whole, to: limit)
      #expect(sameLine, "limit \(limit)")
      let same = SafeText.truncate(prefix, to: limit) == SafeText.truncate(whole, to: limit)
      #expect(same, "limit \(limit)")
    }
  }

  /// `wrap` as it was before words that fit were appended whole: one character at a time.
  private static func wrapByCharacters(_ text: String, to limit: Int) -> [String] {
    var lines: [String] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
      var line = ""
      var used = 0
      for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
        let wordWidth = SafeText.width(String(word))
        if used > 0 && used + 1 + wordWidth > limit {
          lines.append(line)
          line = ""
          used = 0
        }
        if used > 0 {
          line += " "
          used += 1
        }
        for character in word {
          let w = SafeText.cells(character)
          if used + w > limit && used > 0 {
            lines.append(line)
            line = ""
            used = 0
          }
          line.append(character)
          used += w
        }
      }
      lines.append(line)
    }
    return lines
  }

  /// Kana, ideographs, Hangul and fullwidth forms are measured without Unicode's property
  /// tables: whatever the shortcut covers, every mark or format character still takes no cell,
  /// and the scripts it covers take two.
  @Test func marksTakeNoCellAndWideScriptsTwo() {
    var wrong: [UInt32] = []
    for value in UInt32(0x300)...0x10FFFF {
      guard let scalar = Unicode.Scalar(value) else { continue }
      switch scalar.properties.generalCategory {
      case .nonspacingMark, .enclosingMark, .format:
        if SafeText.cells(scalar) != 0 { wrong.append(value) }
      default: break
      }
    }
    #expect(wrong.isEmpty, "marks with a width: \(wrong.prefix(10).map { String($0, radix: 16) })")
    for text in ["日本語", "ひらがな", "カタカナ", "한글", "ＡＢＣ", "。、"] {
      #expect(SafeText.width(text) == 2 * text.count, "\(text)")
    }
    #expect(SafeText.width("か\u{3099}") == 2, "a voicing mark takes no cell")
  }

  /// `wrap` takes a character boundary between two scalars of the scripts that never join
  /// without asking: each such pair really is two characters.
  @Test func scalarsThatNeverJoinAreCharactersOfTheirOwn() {
    let samples = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter(SafeText.neverJoins)
    #expect(samples.count > 20_000)
    let probes: [Unicode.Scalar] = ["a", " ", "~", "\u{3000}", "\u{3029}", "あ", "ン", "漢", "！"]
    var joined: [String] = []
    for first in samples {
      for second in probes where String(String.UnicodeScalarView([first, second])).count != 2 {
        joined.append(String(first.value, radix: 16))
      }
    }
    #expect(joined.isEmpty, "joined: \(joined.prefix(10))")
  }

  @Test("wrapping appends whole words as character by character would", arguments: texts)
  func wrapSameAsByCharacters(text: String) {
    let shown = SafeText.sanitize(
      text.replacingOccurrences(of: "。", with: "。 "), keepNewlines: true)
    for limit in [1, 2, 3, 5, 8, 13, 20, 40, 80] {
      let same = SafeText.wrap(shown, to: limit) == Self.wrapByCharacters(shown, to: limit)
      #expect(same, "limit \(limit)")
    }
  }
}
