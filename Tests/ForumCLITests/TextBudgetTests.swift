import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Text budgets through the `forum` binary: every field is limited in bytes and in what one
/// character may carry, terminal sizes are clamped, argv is UTF-8 like piped input, and
/// invisible or line-breaking characters stored by anyone show harmlessly.
@Suite("text budgets")
struct TextBudgetTests {
  static let zalgoName = "A" + String(repeating: "\u{301}", count: 60_000)

  @Test("a name of A plus 60,000 combining accents is refused, the old name kept")
  func zalgoNameIsRefused() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "plain"])
    let result = try forum.run(["name", TextBudgetTests.zalgoName])
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderrLines.count == 1)
    #expect(result.stderr.contains("combining marks"), "\(result.summary)")
    #expect(try forum.openBoard().me.displayName == "plain")
  }

  @Test("every field refuses a character with 9 combining marks and takes one with 8")
  func marksPerCharacter() throws {
    let forum = try ForumFixture()
    let eight = "e" + String(repeating: "\u{301}", count: 8)
    let nine = eight + "\u{301}"
    try forum.ok(["new", "--title", "t" + eight, "--description", eight])
    try forum.ok(["comment", "1", eight])
    try forum.ok(["name", "n" + eight])
    for arguments in [
      ["new", "--title", nine], ["new", "--title", "t", "--description", nine],
      ["comment", "1", nine], ["name", nine],
    ] {
      let result = try forum.run(arguments)
      #expect(result.status == 1, "\(result.summary)")
      #expect(result.stderr.contains("combining marks"), "\(result.summary)")
    }
    // A joined emoji sequence (10 code points) is one ordinary character.
    try forum.ok(["new", "--title", "👩🏽‍❤️‍💋‍👨🏾"])
    #expect(try forum.storedThreads().count == 2)
    #expect(try forum.storedComments().count == 1)
  }

  @Test("titles, bodies and names are limited in bytes as well as characters")
  func byteCaps() throws {
    let forum = try ForumFixture()
    // 200 characters of 5 code points each: within the character limit, 2,000 bytes.
    let heavy = String(repeating: "e\u{301}\u{302}\u{303}\u{304}", count: 200)
    let title = try forum.run(["new", "--title", heavy])
    #expect(title.status == 1, "\(title.summary)")
    #expect(title.stderr.contains("bytes"), "\(title.summary)")
    let name = try forum.run(["name", String(repeating: "e\u{301}\u{302}\u{303}", count: 30)])
    #expect(name.status == 1, "\(name.summary)")
    #expect(name.stderr.contains("bytes"), "\(name.summary)")
    #expect(try forum.storedThreads().isEmpty)
  }

  @Test("COLUMNS and LINES are clamped to 1000")
  func hugeColumnsAreClamped() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "one"])
    let list = try forum.run(["list"], environment: ["COLUMNS": "100000000", "LINES": "99999"])
    #expect(list.status == 0, "\(list.summary)")
    #expect(list.stdoutData.count < 20_000, "\(list.stdoutData.count) bytes")
    #expect(list.stdoutLines.allSatisfy { $0.count <= 1000 })
    #expect(list.stdout.contains("one"))
  }

  @Test("an argument that is not UTF-8 is refused like the same bytes from a pipe")
  func invalidUTF8Argument() throws {
    let forum = try ForumFixture()
    // Process takes Strings, so the shell passes the raw byte.
    let script = #"exec "$FORUM" --db "$DB" --profile alice new --title "$(printf 'bad\377')""#
    var environment = forum.environment()
    environment["FORUM"] = forum.binary
    environment["DB"] = forum.db
    let result = try ForumFixture.launch(
      "/bin/sh", arguments: ["-c", script], environment: environment, input: Data(),
      timeout: 60)
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderrLines.count == 1)
    #expect(result.stderr.contains("not valid UTF-8"), "\(result.summary)")
    #expect(try forum.storedThreads().isEmpty)
    let piped = try forum.run(["new"], input: Data("bad\u{FF}".utf8.dropLast(2) + [0xFF, 0x0A]))
    #expect(piped.status != 0)
  }

  @Test("a title stored before the limits shows at most 8 marks a character")
  func storedZalgoIsCut() throws {
    let forum = try ForumFixture()
    let board = try forum.openBoard()
    _ = try board.createThread(title: "placeholder", description: "", image: nil)
    try board.store.master.update(
      "Thread", objectId: try #require(try forum.storedThreads().first?.objectId),
      set: ["title": .string(TextBudgetTests.zalgoName)])
    for command in [["show", "1"], ["list"]] {
      let result = try forum.ok(command)
      #expect(result.stdoutData.count < 2_000, "\(result.stdoutData.count) bytes")
      #expect(result.stdout.contains("A" + String(repeating: "\u{301}", count: 8)))
    }
  }

  @Test("line separators, zero-width and tag characters show harmlessly; flags stay whole")
  func invisibleCharactersShowHarmlessly() throws {
    let forum = try ForumFixture()
    let scotland = "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"
    let title =
      "a\u{2028}b\u{2029}c z\u{200B}w\u{2060}j\u{FEFF}x hidden\u{E0041}\u{E0042} "
      + scotland + " 👨‍👩‍👧 a\u{200D}b"
    let board = try forum.openBoard()
    _ = try board.createThread(title: "placeholder", description: "", image: nil)
    try forum.openStore().master.update(
      "Thread", objectId: try #require(try forum.storedThreads().first?.objectId),
      set: ["title": .string(title)])
    for command in [["show", "1"], ["list"]] {
      let result = try forum.ok(command)
      let out = result.stdout
      #expect(out.contains("a␤b¶c"), "\(out)")
      #expect(out.contains("zwjx"), "\(out)")
      #expect(out.contains("hidden "), "\(out)")
      #expect(
        !out.unicodeScalars.contains {
          [0x2028, 0x2029, 0x200B, 0x2060, 0xFEFF].contains($0.value)
        })
      #expect(!out.unicodeScalars.contains { (0xE0041...0xE0042).contains($0.value) })
      #expect(out.contains(scotland), "\(out)")
      #expect(out.contains("👨‍👩‍👧"), "\(out)")
      #expect(out.contains("ab"), "\(out)")
    }
  }
}
