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
}
