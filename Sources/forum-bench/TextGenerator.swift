/// SplitMix64: a seeded generator, so the same command line seeds the same board.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Post text of realistic length, mixing Japanese and English as the seed app's boards do.
struct TextGenerator {
  var random: SeededGenerator

  private static let phrases = [
    "今日はいい天気ですね", "駅前の新しいカフェに行ってきました", "このスレッドの続きです",
    "写真を撮ったので共有します", "週末の予定はありますか", "ラーメンの話をしましょう",
    "初めて投稿します、よろしくお願いします", "猫がかわいい", "雨の日は家で映画を見ます",
    "the build finally passes on Linux", "does anyone know a good keyboard",
    "posting from the train again", "I tried the recipe from last week", "same here",
    "thanks for the tip, it worked", "what a game last night", "see you at the meetup",
    "SQLite is faster than I expected", "my cat sat on the laptop", "agreed, 100%",
  ]

  init(seed: UInt64) { random = SeededGenerator(seed: seed) }

  /// Several phrases joined until `length` bytes of UTF-8 or more.
  mutating func sentence(atLeast length: Int) -> String {
    var text = ""
    while text.utf8.count < length {
      if !text.isEmpty { text += Bool.random(using: &random) ? "。" : ". " }
      text += TextGenerator.phrases.randomElement(using: &random)!
    }
    return text
  }

  mutating func title() -> String { sentence(atLeast: Int.random(in: 8...60, using: &random)) }

  mutating func description() -> String {
    sentence(atLeast: Int.random(in: 40...500, using: &random))
  }

  mutating func comment() -> String { sentence(atLeast: Int.random(in: 10...400, using: &random)) }
}

/// Ready-made texts drawn at random: building a fresh sentence for each of a million posts would
/// cost the seed more time than storing it.
struct TextPool {
  private let titles: [String]
  private let descriptions: [String]
  private let comments: [String]

  init(size: Int = 4096, seed: UInt64) {
    var generator = TextGenerator(seed: seed)
    titles = (0..<size).map { _ in generator.title() }
    descriptions = (0..<size).map { _ in generator.description() }
    comments = (0..<size).map { _ in generator.comment() }
  }

  func title(_ random: inout SeededGenerator) -> String { titles.randomElement(using: &random)! }

  func description(_ random: inout SeededGenerator) -> String {
    descriptions.randomElement(using: &random)!
  }

  func comment(_ random: inout SeededGenerator) -> String {
    comments.randomElement(using: &random)!
  }
}
