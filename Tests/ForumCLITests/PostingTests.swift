import Foundation
import Testing

@testable import Datastore

/// `new` and `comment`, one-shot and from piped REPL scripts.
@Suite("posting threads and comments")
struct PostingTests {
  @Test func newWithTitleAndDescriptionOptions() throws {
    let forum = try ForumFixture()
    let result = try forum.ok(["new", "--title", "Hello", "--description", "first post"])
    #expect(result.stdout == "Posted #1.\n")
    #expect(result.stderr.isEmpty)

    let threads = try forum.storedThreads()
    #expect(threads.count == 1)
    #expect(threads.first?["title"] == .string("Hello"))
    #expect(threads.first?["description"] == .string("first post"))
    #expect(threads.first?["number"] == .int(1))
    #expect(threads.first?["commentCount"] == .int(0))
    #expect(threads.first?["fileName"] == nil)
  }

  @Test func newFromAPipedREPLAsksForTitleDescriptionAndImage() throws {
    let forum = try ForumFixture()
    let result = try forum.script([
      "new", "Piped title", "first line", "", "third line", ".", "", "list",
    ])
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stderr.isEmpty)
    // No prompts or echo on a pipe: just what the commands print.
    #expect(result.stdoutLines.first == "Posted #1.")
    #expect(result.stdoutLines.count == 2)
    #expect(
      result.stdoutLines.last?.hasPrefix("#1 ●  Piped title — first line  third line") == true)

    let thread = try #require(try forum.storedThreads().first)
    #expect(thread["title"] == .string("Piped title"))
    #expect(thread["description"] == .string("first line\n\nthird line"))
    #expect(thread["fileName"] == nil)
  }

  @Test func newWithTitleFromAPipeDoesNotWaitForADescription() throws {
    let forum = try ForumFixture()
    let result = try forum.script([
      "new --title 'quoted title' ", "new --title \"b\" --description \"x y\"",
    ])
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdoutLines == ["Posted #1.", "Posted #2."])
    let threads = try forum.storedThreads()
    #expect(threads.map { $0["title"] } == [.string("quoted title"), .string("b")])
    #expect(threads.map { $0["description"] } == [.string(""), .string("x y")])
  }

  @Test func newWithAnImageStoresItAndDeleteRemovesIt() throws {
    let forum = try ForumFixture()
    let png = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fixtures/corpus/png/suite/basn2c08.png").path
    try #require(FileManager.default.fileExists(atPath: png))
    let posted = try forum.run(["new", "--title", "picture", "--image", png])
    #expect(posted.status == 0, "\(posted.summary)")
    let thread = try #require(try forum.storedThreads().first)
    let fileName = try #require(thread["fileName"]?.stringValue)
    let store = try forum.openStore()
    #expect(try store.master.fileInfo(name: fileName).mimeType == "image/png")

    let list = try forum.ok(["list"]).stdoutLines
    #expect(list.first?.hasPrefix("#1 ●▣ picture") == true)
    let shown = try forum.ok(["show", "1"]).stdout
    #expect(shown.contains("[image: \(fileName) 32×32 PNG"))

    try forum.ok(["delete", "1", "--yes"])
    #expect(throws: (any Error).self) { try store.master.fileInfo(name: fileName) }
  }

  @Test func commentWithTextOnTheCommandLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let result = try forum.ok(["comment", "1", "hello", "there"], profile: "bob")
    #expect(result.stdout == "Posted 1/1.\n")
    let hash = try forum.ok(["comment", "#1", "second"])
    #expect(hash.stdout == "Posted 1/2.\n")
    let comments = try forum.storedComments(ofThread: 1)
    #expect(comments.map { $0["text"] } == [.string("hello there"), .string("second")])
    #expect(comments.map { $0["number"] } == [.int(1), .int(2)])
  }

  @Test func commentReadsLinesUntilADotFromAPipe() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    // One-shot, text on stdin.
    let oneShot = try forum.run(
      ["comment", "1"], profile: "bob", input: Data("line a\nline b\n.\nnot read\n".utf8))
    #expect(oneShot.status == 0, "\(oneShot.summary)")
    #expect(oneShot.stdout == "Posted 1/1.\n")
    // In a script, the following lines are commands again.
    let script = try forum.script(["comment 1", "multi", "  indented", ".", "list"])
    #expect(script.status == 0, "\(script.summary)")
    #expect(script.stdoutLines.first == "Posted 1/2.")
    #expect(script.stdoutLines.count == 2)
    let comments = try forum.storedComments(ofThread: 1)
    #expect(
      comments.map { $0["text"] } == [.string("line a\nline b"), .string("multi\n  indented")])
  }

  @Test func scriptsHaveNoCurrentThread() throws {
    let forum = try ForumFixture()
    try forum.script(["new --title one", "new --title two", "new --title three"])
    let result = try forum.script(
      [
        "show 3", "comment", "not for #3", ".", "comment 3 inline words", "comment #3", "lines",
        ".",
      ], profile: "bob")
    #expect(result.status == 2, "\(result.summary)")
    #expect(result.stderrLines == ["forum: line 2: which thread? e.g. comment 12 TEXT"])
    #expect(result.stdoutLines.suffix(2) == ["Posted 3/1.", "Posted 3/2."])
    #expect(
      try forum.storedComments(ofThread: 3).map { $0["text"] }
        == [.string("inline words"), .string("lines")])
    #expect(try forum.storedComments(ofThread: 1).isEmpty)
    #expect(try forum.storedComments(ofThread: 2).isEmpty)
  }

  @Test func commentOnAMissingThreadIsNotFound() throws {
    let forum = try ForumFixture()
    let result = try forum.run(["comment", "7", "hi"])
    #expect(result.status == 4)
    #expect(result.stderr == "forum: there is no thread #7\n")
    #expect(try forum.storedComments().isEmpty)
  }
}
