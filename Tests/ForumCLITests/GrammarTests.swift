import Foundation
import Testing

/// DESIGN §4: the same line means the same thing at the prompt, in a script and as a one-shot
/// command; text is text; a refused command never lets its draft run as commands.
@Suite("the command grammar (pipes)")
struct GrammarTests {
  /// Threads #1 and #2 by alice, #2 with bob's comment 2/1.
  private func seeded() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    try forum.ok(["new", "--title", "second"])
    try forum.ok(["comment", "2", "from bob"], profile: "bob")
    return forum
  }

  @Test func proseKeepsItsQuotesBackslashesAndSpacing() throws {
    let forum = try seeded()
    let said = #"He said "hi"   to   me, C:\path"#
    let result = try forum.script([
      "comment 1 I'm coming tomorrow", "comment #1 \(said)", "name O'Brien",
      "comment 1   spaces around the text are not text  ",
    ])
    #expect(result.status == 0, "\(result.summary)")
    #expect(
      try forum.storedComments(ofThread: 1).map { $0["text"] } == [
        .string("I'm coming tomorrow"), .string(said),
        .string("spaces around the text are not text"),
      ])
    let me = try forum.ok(["--json", "whoami"]).json()
    #expect(me.string("displayName") == "O'Brien")

    // One-shot: the shell already split the words; they are joined with one space each.
    try forum.ok(["comment", "1", "two  spaces", "kept"])
    #expect(try forum.storedComments(ofThread: 1).last?["text"] == .string("two  spaces kept"))
  }

  @Test func aRefusedTitleNeverRunsTheDescriptionAsCommands() throws {
    let forum = try seeded()
    let before = try forum.fingerprint()
    for title in [String(repeating: "x", count: 201), "bell\u{07}", "", "   "] {
      let result = try forum.script(["new", title, "delete 1 --yes", "name Pwned", ".", ""])
      #expect(result.status != 0, "\(result.summary)")
      #expect(result.stderrLines.count == 1, "\(result.summary)")
      #expect(result.stderr.hasPrefix("forum: line 2: "), "the title's line: \(result.summary)")
      #expect(result.stdout.isEmpty, "\(result.summary)")
    }
    var invalid = Data("new\n".utf8)
    invalid.append(contentsOf: [0x41, 0xFF, 0x0A])
    invalid.append(Data("delete 2 --yes\n.\n".utf8))
    let bytes = try forum.run([], input: invalid)
    #expect(bytes.status == 1, "\(bytes.summary)")
    #expect(bytes.stderr.hasPrefix("forum: line 2: "), "\(bytes.summary)")
    #expect(try forum.fingerprint() == before)
  }

  @Test func aRefusedCommentNeverRunsItsDraftAsCommands() throws {
    let forum = try seeded()
    let before = try forum.fingerprint()
    // No current thread in a script; a missing thread; a bad line inside the draft.
    let noThread = try forum.script(["comment", "thanks", "delete 2 --yes", "."])
    #expect(noThread.status == 2, "\(noThread.summary)")
    #expect(noThread.stderrLines == ["forum: line 1: which thread? e.g. comment 12 TEXT"])
    let missing = try forum.script(["comment 9", "thanks", "delete 2 --yes", ".", "list"])
    #expect(missing.status == 4, "\(missing.summary)")
    #expect(missing.stderrLines == ["forum: line 1: there is no thread #9"])
    #expect(missing.stdoutLines.count == 2, "only the list ran: \(missing.summary)")
    var bad = Data("comment 1\nfine\n".utf8)
    bad.append(contentsOf: [0xC3, 0x28, 0x0A])
    bad.append(Data("delete 2 --yes\n.\n".utf8))
    let invalid = try forum.run([], input: bad)
    #expect(invalid.status == 1, "\(invalid.summary)")
    #expect(invalid.stderrLines.count == 1)
    #expect(invalid.stderr.hasPrefix("forum: line 3: "), "the bad line: \(invalid.summary)")
    let flagged = try forum.script(["comment #9 --edit", "delete 2 --yes", "."])
    #expect(flagged.status == 4, "\(flagged.summary)")
    #expect(flagged.stderrLines == ["forum: line 1: there is no thread #9"])
    let tooLong = try forum.script(
      ["comment 1", String(repeating: "y", count: 10_001), "delete 2 --yes", "."])
    #expect(tooLong.status == 1, "\(tooLong.summary)")
    #expect(tooLong.stderrLines.count == 1, "\(tooLong.summary)")
    #expect(try forum.fingerprint() == before)
  }

  @Test func aScriptLineMeansWhatTheOneShotCommandMeans() throws {
    let forum = try seeded()
    // `delete 2` after `show 1` is thread #2, never comment 1/2 (there is no current thread).
    let result = try forum.script(["show 2", "delete 1 --yes"])
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdoutLines.last == "Deleted #1.")
    #expect(try forum.storedThreads().map { $0["number"] } == [.int(2)])
    #expect(try forum.storedComments(ofThread: 2).count == 1)

    let before = try forum.fingerprint()
    let relative = try forum.script(["show 2", "delete /1 --yes", "comment /1 hi"])
    #expect(relative.status == 2, "\(relative.summary)")
    #expect(relative.stderrLines.count == 2, "\(relative.summary)")
    #expect(relative.stderrLines.first?.hasPrefix("forum: line 2: ") == true)
    #expect(try forum.fingerprint() == before)

    // `comment` inside a script takes its thread from the line, as `forum comment 2 …` does.
    let comment = try forum.script(["show 2", "comment 2 of us are coming"])
    #expect(comment.status == 0, "\(comment.summary)")
    #expect(
      try forum.storedComments(ofThread: 2).last?["text"] == .string("of us are coming"))
  }

  @Test func bailStopsAtTheFirstFailure() throws {
    let forum = try seeded()
    let result = try forum.script(
      ["show 9", "new --title never"], arguments: ["--bail"])
    #expect(result.status == 4, "\(result.summary)")
    #expect(result.stderrLines == ["forum: line 1: there is no thread #9"])
    #expect(try forum.storedThreads().count == 2)
    let without = try forum.script(["show 9", "new --title posted"])
    #expect(without.status == 4)
    #expect(try forum.storedThreads().count == 3)
  }

  @Test func pipedNewPostsWithoutAskingForAnImage() throws {
    let forum = try ForumFixture()
    let oneShot = try forum.run(["new"], input: Data("Title\nbody\n.\n".utf8))
    #expect(oneShot.status == 0, "\(oneShot.summary)")
    #expect(oneShot.stdout == "Posted #1.\n")

    let script = try forum.script(["new", "Scripted", "body", ".", "list"])
    #expect(script.status == 0, "\(script.summary)")
    #expect(script.stdoutLines.first == "Posted #2.")
    #expect(script.stdoutLines.count == 3, "the list ran: \(script.summary)")

    let described = try forum.run(["new", "--title", "T"], input: Data("desc\n".utf8))
    #expect(described.status == 0, "\(described.summary)")
    let threads = try forum.storedThreads()
    #expect(threads.map { $0["title"] } == [.string("Title"), .string("Scripted"), .string("T")])
    #expect(
      threads.map { $0["description"] } == [.string("body"), .string("body"), .string("desc")])
  }

  @Test func anOptionValueStartingWithDashesIsRefused() throws {
    let forum = try ForumFixture()
    let db = try forum.run(["--db", "--json", "list"], profile: nil)
    #expect(db.status == 2, "\(db.summary)")
    #expect(!FileManager.default.fileExists(atPath: forum.root + "/--json"))
    let profile = try forum.run(["--profile", "--json", "list"], profile: nil)
    #expect(profile.status == 2, "\(profile.summary)")
    let title = try forum.run(["new", "--title", "--json"])
    #expect(title.status == 2, "\(title.summary)")
    #expect(try forum.storedThreads().isEmpty)
  }
}
