import Foundation
import Testing

/// Issue #21 item 15: the smaller defects, each through the binary.
@Suite("issue 21's smaller defects")
struct SmallDefectsTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    try forum.ok(["--json", "whoami"], profile: profile).json().string("userName") ?? ""
  }

  /// A message's ref in `search` was cut to `@fv3dwHCsR0…`, hiding its number.
  @Test(arguments: [80, 40])
  func searchShowsAMessagesWholeRef(columns: Int) throws {
    let forum = try ForumFixture()
    let bob = try handle(forum, "bob")
    for _ in 1...10 { try forum.ok(["dm", "@" + bob, "the otter count"]) }
    let found = try forum.run(
      ["search", "otter"], environment: ["COLUMNS": String(columns)])
    #expect(found.status == 0, "\(found.summary)")
    for number in 1...10 {
      #expect(
        found.stdoutLines.contains { $0.hasPrefix("@\(bob)/\(number) ") },
        "@\(bob)/\(number): \(found.stdout)")
    }
  }

  /// `mod list` was refused to a moderator; they learn they are one (only the owner reads the
  /// whole role).
  @Test func aModeratorListsThemself() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")
    let mod = try handle(forum, "mod")
    try forum.ok(["mod", "add", "@" + mod], profile: "owner")
    let listed = try forum.run(["mod", "list"], profile: "mod")
    #expect(listed.status == 0, "\(listed.summary)")
    #expect(listed.stdoutLines.first?.hasPrefix("@\(mod)  ") == true, "\(listed.summary)")
    #expect(listed.stdout.contains("only the board's owner sees every moderator"))
    let json = try forum.ok(["--json", "mod", "list"], profile: "mod").json()
    #expect(json.objects("results").map { $0.string("userName") } == [mod])
    // Anyone else is still refused.
    #expect(try forum.run(["mod", "list"], profile: "alice").status == 3)
  }

  /// A ZWJ family (and a skin tone, an emoji variation selector) is one wide cell as terminals
  /// draw it; counted as 6, its `list` row came out 4 cells short of the others.
  @Test func emojiSequencesAreOneWideCell() throws {
    let forum = try ForumFixture()
    let plain = "plain family picnic on the long weekend by the lake"
    for emoji in ["👨‍👩‍👧", "👍🏽", "❤️"] {
      try forum.ok([
        "new", "--title", "\(emoji) family picnic on the long weekend", "--description", "x",
      ])
    }
    try forum.ok(["new", "--title", plain, "--description", "x"])
    let rows = try forum.run(["list"], environment: ["COLUMNS": "40"]).stdoutLines
      .filter { $0.hasPrefix("#") }
    #expect(rows.count == 4)
    let widths = rows.map(drawnWidth)
    #expect(Set(widths).count == 1, "\(zip(rows, widths).map { "\($1) «\($0)»" })")
    #expect(widths.allSatisfy { $0 <= 40 })
  }

  /// Under `LANG=ja` no English was to be left in a line: `(#4 was deleted by a moderator)`,
  /// `no such file`, `(there is no user @Alice)` and their kind.
  @Test func japaneseErrorsHoldNoEnglish() throws {
    let forum = try ForumFixture()
    let ja = "ja_JP.UTF-8"
    try forum.ok(["list"], profile: "owner")
    try forum.ok(["new", "--title", "t", "--description", "d"])
    try forum.ok(["comment", "1", "spam"])
    try forum.ok(["new", "--title", "gone", "--description", "d"])
    try forum.ok(["mod", "add", "@" + (try handle(forum, "mod"))], profile: "owner")
    try forum.ok(["delete", "1/1", "--yes"], profile: "mod")
    try forum.ok(["delete", "2", "--yes"], profile: "mod")
    let directory = forum.root + "/a-directory"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let lines: [[String]] = [
      ["edit", "1/1", "new text"],
      ["edit", "2", "--title", "back"],
      ["history", "1/1"],
      ["new", "--title", "t", "--description", "d", "--image", forum.root + "/missing.png"],
      ["new", "--title", "t", "--description", "d", "--image", directory],
      ["dm", "@Alice", "hello"],
      ["dm", "@nobody1234", "hello"],
      ["show", "99"],
      ["reply", "1/99", "x"],
      ["image", "1"],
      ["delete", "1/1", "--yes"],
      ["--images", "sixel", "list"],
      ["list", "--nope"],
    ]
    // Two English words in a row, not an option's value (`--page last`) nor a handle.
    let english = try NSRegularExpression(pattern: "(?<![-@\\w])[A-Za-z]{2,} [A-Za-z]+")
    for line in lines {
      let result = try forum.run(line, lang: ja)
      #expect(result.status != 0, "\(line)")
      let text = result.stderr
      let found = english.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
      #expect(found == nil, "\(line): \(text)")
      #expect(
        !text.isEmpty && text.unicodeScalars.contains { $0.value >= 0x3040 }, "\(line): \(text)")
    }
    // Pictures refused for what is inside them: cut short, corrupt, over a budget.
    let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    var header = Data(
      signature + pngChunk("IHDR", bigEndian(40_000) + bigEndian(10) + [8, 6, 0, 0, 0]))
    header.append(contentsOf: pngChunk("IDAT", [0x78, 0x9C, 0x03, 0x00]) + pngChunk("IEND", []))
    let pictures: [(String, Data, String)] = [
      ("cut.png", Data(signature + [0, 0, 0, 13, 0x49, 0x48]), "PNG が途中で切れています"),
      ("bad-type.png", Data(signature + pngChunk("I$DR", [1, 2, 3])), "PNG が壊れています"),
      ("wide.png", header, "PNG の画像が大きすぎます (40000×10 ピクセル"),
      ("scans.jpg", try GeneratedImages.bytes("scan-bomb.jpg"), "JPEG のスキャンが多すぎます"),
    ]
    for (name, bytes, said) in pictures {
      let path = forum.root + "/" + name
      try bytes.write(to: URL(fileURLWithPath: path))
      let result = try forum.run(
        ["new", "--title", "t", "--description", "d", "--image", path], lang: ja)
      let text = result.stderr
      #expect(result.status != 0 && text.contains(said), "\(name): \(text)")
      let found = english.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
      #expect(found == nil, "\(name): \(text)")
    }
    let whoami = try forum.run(["whoami"], lang: ja).stdoutLines
    #expect(whoami.dropFirst().map { $0.prefix { $0 != ":" } } == ["ユーザー ID", "プロファイル", "データベース"])
  }
}

/// Cells as a terminal draws them: an emoji sequence is one wide character.
private func drawnWidth(_ line: String) -> Int {
  line.reduce(0) { sum, character in
    let scalars = character.unicodeScalars
    let sequence =
      scalars.count > 1
      && scalars.contains {
        $0.value == 0x200D || $0.value == 0xFE0F || (0x1F3FB...0x1F3FF).contains($0.value)
      }
    return sum + (sequence ? 2 : displayWidth(String(character)))
  }
}

private func bigEndian(_ value: UInt32) -> [UInt8] {
  [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

/// A PNG chunk with its CRC-32 (over type and data).
private func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
  let body = Array(type.utf8) + data
  var crc: UInt32 = 0xFFFF_FFFF
  for byte in body {
    crc ^= UInt32(byte)
    for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
  }
  return bigEndian(UInt32(data.count)) + body + bigEndian(~crc)
}
