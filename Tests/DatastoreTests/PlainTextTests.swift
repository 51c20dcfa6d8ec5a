import Foundation
import Testing

@testable import Datastore

/// The text helpers that stand in for full Foundation's give what Foundation gives.
@Suite("plain text helpers")
struct PlainTextTests {
  static let samples = [
    "", " ", "\t\n", "abc", "  abc  ", "\r\nabc\r\n", "\u{3000}全角\u{3000}", "\u{A0}x\u{A0}",
    "\u{2028}x\u{2029}", "\u{85}x\u{85}", " \u{301}a ", "a b\tc", "\u{200B}x\u{200B}",
    "\u{1680}\u{2009}x\u{202F}\u{205F}", "\u{B}\u{C}x\u{B}", "🇯🇵 ", " e\u{301}",
  ]

  @Test(arguments: samples)
  func trimmingMatchesFoundation(text: String) {
    #expect(text.trimmingWhiteSpace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
    #expect(text[...].trimmingWhiteSpace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  @Test func zeroPaddingMatchesFormat() {
    for value in [0, 7, 42, 999, 1000, 65_535, 123_456] {
      #expect(zeroPadded(value, width: 4) == String(format: "%04d", value))
      #expect(zeroPadded(value, width: 4, radix: 16) == String(format: "%04x", value))
      #expect(zeroPadded(value, width: 2) == String(format: "%02d", value))
    }
  }
}
