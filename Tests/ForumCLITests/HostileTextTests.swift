import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Text meant to attack a terminal or a database: refused at the door, or stored and shown
/// harmlessly. Nothing that reaches stdout or stderr may drive the terminal.
@Suite("hostile text")
struct HostileTextTests {
  static let attacks = [
    "\u{1B}]0;pwned\u{07}", "\u{1B}[2J", "\u{1B}[31mred\u{1B}[0m", "bell\u{07}", "back\u{08}space",
    "c1 \u{9B}31m csi", "del\u{7F}",
  ]

  @Test(arguments: attacks)
  func controlCharactersInATitleAreRefused(attack: String) throws {
    let forum = try ForumFixture()
    let result = try forum.run(["new", "--title", "hi " + attack])
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "forum: The title must not contain control characters\n")
    expectHarmless(result)
    #expect(try forum.storedThreads().isEmpty)
  }

  @Test func controlCharactersInCommentsDescriptionsAndNamesAreRefused() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "target"])
    for attack in Self.attacks {
      let comment = try forum.run(["comment", "1", attack])
      #expect(comment.status == 1)
      #expect(comment.stderr == "forum: The comment must not contain control characters\n")
      expectHarmless(comment)
      let description = try forum.run(["new", "--title", "t", "--description", attack])
      #expect(description.status == 1)
      expectHarmless(description)
      let name = try forum.run(["name", attack])
      #expect(name.status == 1)
      #expect(name.stderrLines.count == 1)
      expectHarmless(name)
      // Echoed words in usage errors are shown harmlessly too.
      let unknown = try forum.run([attack])
      #expect(unknown.status == 2)
      expectHarmless(unknown)
      let show = try forum.run(["show", attack])
      #expect(show.status == 2)
      expectHarmless(show)
      let option = try forum.run(["list", "--" + attack])
      #expect(option.status == 2)
      expectHarmless(option)
    }
    #expect(try forum.storedThreads().count == 1)
    #expect(try forum.storedComments().isEmpty)
    let me = try forum.ok(["--json", "whoami"]).json()
    #expect(me.string("displayName") == me.string("userName"))
  }

  @Test func pipedScriptsWithNULInvalidUTF8AndEscapesAreRefusedLineByLine() throws {
    let forum = try ForumFixture()
    var input = Data()
    func line(_ bytes: [UInt8]) { input.append(contentsOf: bytes + [0x0A]) }
    func line(_ text: String) { line(Array(text.utf8)) }
    line("new --title first")  // 1
    line(Array("new --title nul".utf8) + [0x00] + Array("byte".utf8))  // 2
    line(Array("new --title bad".utf8) + [0xFF, 0xFE, 0xC0, 0x80] + Array("utf8".utf8))  // 3
    line("comment 1 \u{1B}]0;pwned\u{07}")  // 4
    line("\u{1B}[2J")  // 5
    line("comment 1")  // 6: a draft with a bad line in it
    line("fine")  // 7
    line([0xC3, 0x28])  // 8
    line("new --title injected-from-a-draft")  // 9: still part of the draft
    line(".")  // 10
    line("new --title last")  // 11
    let result = try forum.run([], input: input)
    #expect(result.status == 1, "\(result.summary)")
    expectHarmless(result)
    let lines = result.stderrLines
    #expect(lines.count == 5, "\(lines)")
    #expect(
      lines.map { $0.split(separator: ":").prefix(2).joined(separator: ":") } == [
        "forum: line 2", "forum: line 3", "forum: line 4", "forum: line 5", "forum: line 8",
      ])
    #expect(lines.first == "forum: line 2: The title must not contain control characters")
    #expect(lines[1] == "forum: line 3: not valid UTF-8")
    #expect(lines[3].contains("unknown command '␛[2J'"))
    #expect(lines[4] == "forum: line 8: not valid UTF-8", "the bad line of the draft")
    #expect(result.stdoutLines == ["Posted #1.", "Posted #2."])
    #expect(try forum.storedThreads().map { $0["title"] } == [.string("first"), .string("last")])
    #expect(try forum.storedComments().isEmpty)
  }

  @Test func hugeLinesAreRefusedWithoutEchoingThem() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let megabyte = String(repeating: "x", count: 1_000_000)
    let tooLong = String(repeating: "y", count: 4 * 1024 * 1024 + 1)
    let script = [
      "comment 1 " + megabyte, "new --title " + megabyte, tooLong, "comment 1 after", "list",
    ]
    let result = try forum.script(script)
    #expect(result.status == 1)
    expectHarmless(result)
    #expect(
      result.stderrLines == [
        "forum: line 1: The comment is 1000000 characters; the limit is 10000",
        "forum: line 2: The title is 1000000 characters; the limit is 200",
        "forum: line 3: the line is longer than 4 MB; it was skipped",
      ])
    #expect(result.stdoutLines.first == "Posted 1/1.")
    #expect(try forum.storedComments().map { $0["text"] } == [.string("after")])
    #expect(try forum.storedThreads().count == 1)

    // A one-megabyte comment body from a draft.
    let draft = try forum.run(
      ["comment", "1"], input: Data(("z" + megabyte + "\n.\n").utf8))
    #expect(draft.status == 1)
    #expect(draft.stderr == "forum: The comment is longer than 10000 characters\n")
    #expect(try forum.storedComments().count == 1)
  }

  @Test func sqlLooksLikeTextAndStaysText() throws {
    let forum = try ForumFixture()
    let injection = "'; DROP TABLE Thread; --"
    let more = "Robert\"); DELETE FROM objects; --"
    try forum.ok(["new", "--title", injection, "--description", more])
    try forum.ok(["comment", "1", injection], profile: "bob")
    try forum.ok(["name", injection], profile: "bob")
    try forum.ok(["new", "--title", "second"])
    let list = try forum.ok(["list"])
    #expect(list.stdout.contains(injection))
    let shown = try forum.ok(["show", "1"])
    #expect(shown.stdoutLines.contains("    " + injection))
    #expect(shown.stdout.contains(more))
    let threads = try forum.storedThreads()
    #expect(threads.map { $0["title"] } == [.string(injection), .string("second")])
    #expect(try forum.storedComments().map { $0["text"] } == [.string(injection)])
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json()
    #expect(bob.string("displayName") == injection)
  }

  @Test func bidiOverridesAreStoredButNeverPrinted() throws {
    let forum = try ForumFixture()
    let title = "invoice \u{202E}fdp.exe"
    try forum.ok(["new", "--title", title, "--description", "\u{2066}isolated\u{2069}"])
    try forum.ok(["comment", "1", "\u{202E}reversed"], profile: "bob")
    #expect(try forum.storedThreads().first?["title"] == .string(title))
    let list = try forum.ok(["list"])
    expectHarmless(list)
    #expect(list.stdout.contains("invoice fdp.exe"))
    let shown = try forum.ok(["show", "1"])
    expectHarmless(shown)
    #expect(shown.stdout.contains("reversed"))
    // JSON keeps the text, escaped.
    let json = try forum.ok(["--json", "show", "1"])
    expectHarmless(json)
    #expect(json.stdout.contains("invoice \\u202efdp.exe"))
    #expect(try json.json().object("thread")?.string("title") == title)
  }

  /// The datastore itself refuses NUL in text, whoever writes it.
  @Test func theStoreRefusesNUL() throws {
    let forum = try ForumFixture()
    let board = try forum.openBoard()
    let thread = try board.createThread(title: "t", description: "", image: nil)
    #expect(throws: DatastoreError.self) {
      try board.store.master.update(
        "Thread", objectId: thread.objectId, set: ["title": .string("nul\u{0}byte")])
    }
    #expect(try forum.storedThreads().first?["title"] == .string("t"))
  }

  /// Rows written straight into the store, bypassing every input check, still render harmlessly.
  @Test func rowsThatBypassedValidationRenderHarmlessly() throws {
    let forum = try ForumFixture()
    let evil =
      "\u{1B}]0;pwned\u{07}\u{1B}[2J\u{1B}[31mred \u{9B}2J \u{202E}cba\u{202C} \u{2067}x\u{2069} "
      + "del\u{7F}cr\r\nnext\tline \u{200F}rlm \u{61C}alm \u{1}\u{1F}"
    do {
      let board = try forum.openBoard(profile: "alice")
      let thread = try board.createThread(title: "placeholder", description: "", image: nil)
      let comment = try board.addComment(to: thread.number, text: "placeholder")
      let master = board.store.master
      try master.update(
        "Thread", objectId: thread.objectId,
        set: ["title": .string(evil), "description": .string(evil + "\n" + evil)])
      try master.update("Comment", objectId: comment.objectId, set: ["text": .string(evil)])
      try master.update("user", objectId: board.me.objectId, set: ["displayName": .string(evil)])

      // A second thread made with the datastore API alone (the engine numbers it), and a huge
      // description no input path would accept.
      try master.create(
        "Thread",
        fields: [
          "title": .string(evil),
          "description": .string(String(repeating: "\u{1B}[2J", count: 200_000)),
          "user": .pointer(className: "user", objectId: board.me.objectId),
        ], acl: .publicRead(owner: board.me.objectId))
    }

    let runs = [
      try forum.run(["list"]), try forum.run(["list"], profile: "bob"),
      try forum.run(["show", "1"]), try forum.run(["show", "1"], profile: "bob"),
      try forum.run(["show", "2"]), try forum.run(["whoami"]),
      try forum.run(["--json", "list"]), try forum.run(["--json", "show", "1"]),
      try forum.run(["--json", "whoami"]),
      try forum.run(["list"], lang: JapaneseTests.ja, environment: ["COLUMNS": "100"]),
      try forum.script(["show 1", "delete 1"], profile: "bob"),
    ]
    for result in runs {
      expectHarmless(result)
    }
    for result in runs.dropLast() { #expect(result.status == 0, "\(result.summary)") }
    // bob's script: `delete 1` after `show 1` is comment 1/1, refused without --yes.
    #expect(runs.last?.status == 2)
    // The escapes are visible as symbols, not swallowed.
    #expect(runs[0].stdout.contains("␛]0;pwned␇␛[2J"))
    #expect(runs[2].stdout.contains("␛[31mred"))
    #expect(runs[2].stdout.contains("del␡cr"))
    // List lines still fit the width: the control pictures are one cell each.
    for line in runs[0].stdoutLines { #expect(displayWidth(line) == 80, "«\(line)»") }
    for line in runs[9].stdoutLines { #expect(displayWidth(line) == 100, "«\(line)»") }
    // JSON round-trips the exact text.
    let json = try JSONSerialization.jsonObject(with: runs[7].stdoutData) as? [String: Any]
    #expect((json?["thread"] as? [String: Any])?["title"] as? String == evil)
  }

  /// Bytes that are not UTF-8, written into the database file behind the datastore's back.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
  func invalidUTF8InsideTheDatabaseIsHandledCleanly() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "MARKER title", "--description", "MARKER body"])
    try forum.ok(["comment", "1", "MARKER comment"])
    let sql =
      "UPDATE objects SET data = CAST(replace(data, 'MARKER', CAST(X'FFFE9BC0AFC2' AS TEXT)) AS TEXT);"
    let update = try ForumFixture.launch(
      "/usr/bin/sqlite3", arguments: [forum.db, sql], environment: forum.environment(),
      input: Data(), timeout: 60)
    #expect(update.status == 0, "\(update.summary)")
    for result in [
      try forum.run(["list"]), try forum.run(["show", "1"]), try forum.run(["--json", "list"]),
    ] {
      // Either shown with replacement characters or refused with one line: never raw bytes.
      #expect(result.status == 0 || result.stderrLines.count == 1, "\(result.summary)")
      if result.status != 0 { #expect(result.status == 1, "E500001: \(result.summary)") }
      expectHarmless(result)
      #expect(!result.stdoutData.contains(0xFF))
    }
  }
}
