import Foundation
import Spawning
import Testing

/// A program driving `forum` through pipes, one command at a time, each sent only once the answer
/// to the last has come. Output into a pipe is written in blocks (issue #13: a page of `show` was
/// a hundred writes), so forum must flush it whenever it waits for more input.
@Suite("a program at the other end of a pipe")
struct PipeConversationTests {
  @Test func eachAnswerArrivesBeforeTheNextCommandIsSent() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first thread", "--description", "its text"])
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: forum.binary)
    process.arguments = ["--db", forum.db, "--profile", "alice"]
    process.environment = forum.environment()
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
    let reader = output.fileHandleForReading.fileDescriptor
    var seen = ""
    /// Sends one line, then waits (10 s at most) for `answer` to come out.
    func ask(_ line: String, expecting answer: String) throws -> Bool {
      try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
      let deadline = Date().addingTimeInterval(10)
      var buffer = [UInt8](repeating: 0, count: 65536)
      while Date() < deadline {
        var ready = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 100) > 0 else { continue }
        let count = read(reader, &buffer, buffer.count)
        guard count > 0 else { return false }
        seen += String(decoding: buffer[0..<count], as: UTF8.self)
        if seen.contains(answer) { return true }
      }
      return false
    }
    #expect(try ask("list", expecting: "first thread"), "\(seen)")
    #expect(try ask("show 1", expecting: "its text"), "\(seen)")
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
  }

  /// Both streams into one file (`2>&1`): an error stays after the answers printed before it.
  @Test func anErrorStaysAfterTheOutputBeforeIt() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first thread"])
    let combined = forum.db + ".out"
    let shell = "\"$0\" --db \"$1\" --profile alice > \"$2\" 2>&1"
    _ = try ForumFixture.launch(
      "/bin/sh", arguments: ["-c", shell, forum.binary, forum.db, combined],
      environment: forum.environment(), input: Data("list\nnosuchcommand\nlist\n".utf8),
      timeout: 60)
    let lines = try String(contentsOfFile: combined, encoding: .utf8).split(separator: "\n")
    let error = try #require(lines.firstIndex { $0.hasPrefix("forum: ") }, "\(lines)")
    let first = try #require(lines.firstIndex { $0.contains("first thread") }, "\(lines)")
    #expect(first < error, "\(lines)")
  }
}
