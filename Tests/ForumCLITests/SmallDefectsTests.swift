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
