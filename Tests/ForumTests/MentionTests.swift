import Testing

@testable import Forum

/// What counts as naming someone's `@handle` (or `@Name`) in a text: in any case, as a word.
@Suite("mentions")
struct MentionTests {
  @Test(arguments: [
    ("@ab12CD34ef", true), ("hi @ab12CD34ef, look", true), ("(@ab12CD34ef)", true),
    ("@ab12CD34ef\nnext", true), ("x@ab12CD34ef", false), ("@ab12CD34efg", false),
    ("@ab12CD34e", false), ("@AB12CD34EF", true), ("ab12CD34ef", false), ("", false),
    ("@ab12CD34ef日本", true),
  ])
  func handleAsAWord(text: String, mentions: Bool) {
    #expect(Board.text(text, mentions: "ab12CD34ef") == mentions)
  }

  @Test func noHandleIsMentionedByEverything() {
    #expect(!Board.text("@ hello", mentions: ""))
    #expect(!Board.text("@   ", mentions: "   "))
    #expect(Board.text("thanks @ken!", mentions: "Ken"))
    #expect(!Board.text("thanks @kenneth", mentions: "Ken"))
    #expect(Board.text("@ケンさん ありがとう", mentions: "ケン"))
  }
}
