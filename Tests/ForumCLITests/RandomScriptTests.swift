import Foundation
import Testing

/// Scripts of random command words, options, numbers and raw bytes (no `quit`, so every line
/// runs): whatever they ask for, `forum` answers with its own exit statuses, never a crash, a
/// hang or a raw escape.
@Suite("random scripts")
struct RandomScriptTests {
  static let words = [
    "list", "show", "new", "comment", "delete", "image", "whoami", "name", "help",
    "--page", "--title", "--description", "--image", "--save", "--force", "--yes", "--json",
    "--no-color", "#1", "1", "0", "-1", "1/1", "1/0", "/", "99999999999999999999", "last", "'",
    "\"", "\\", "~", "/dev/zero", ".", "--", "-", "--page=", "--title=x", "9223372036854775807",
    "1/9223372036854775807", "日本語\u{202E}\u{1B}[2J",
  ]

  /// SplitMix64, so a failing seed can be replayed.
  struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  static func script(seed: UInt64) -> Data {
    var random = Generator(state: seed)
    var out = Data()
    for _ in 0..<60 {
      var parts: [Data] = []
      for _ in 0..<Int.random(in: 0...6, using: &random) {
        if Int.random(in: 0..<10, using: &random) < 8 {
          parts.append(Data(words.randomElement(using: &random)!.utf8))
        } else {
          let count = Int.random(in: 1...8, using: &random)
          parts.append(
            Data(
              (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }.filter { $0 != 10 }
            ))
        }
      }
      out.append(Data(parts.joined(separator: Data(" ".utf8))))
      out.append(10)
    }
    return out
  }

  @Test("random scripts end with forum's own exit statuses", arguments: Array(UInt64(1)...24))
  func randomScript(seed: UInt64) throws {
    let forum = try ForumFixture()
    let result = try forum.run([], input: Self.script(seed: seed), timeout: 60)
    #expect((0...4).contains(result.status), "seed \(seed): \(result.summary)")
    #expect(!result.stderr.contains("Fatal error"), "seed \(seed)")
    // Random lines are refused, each with one line naming it (a refused `new` or `comment`
    // skips the lines of its draft, so fewer lines are reported than are wrong).
    #expect(!result.stderrLines.isEmpty, "seed \(seed): \(result.summary)")
    #expect(result.stderrLines.allSatisfy { $0.hasPrefix("forum: line ") })
    expectHarmless(result)
    // Whatever ran, the board still opens and lists.
    #expect(try forum.run(["--json", "list"]).status == 0)
  }
}
