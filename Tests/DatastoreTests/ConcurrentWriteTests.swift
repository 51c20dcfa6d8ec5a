import Foundation
import Spawning
import Testing

@testable import Datastore

/// Finds the `forum-bench` executable that `swift test` built next to the test bundle.
func benchExecutable() -> String? {
  var candidates: [String] = []
  if let override = ProcessInfo.processInfo.environment["FORUM_BENCH"] {
    candidates.append(override)
  }
  // The test runner lives in the build products directory, beside the package's executables
  // (`.build/debug/forumPackageTests.xctest`, or under `--scratch-path`).
  if let runner = Bundle.main.executableURL {
    candidates.append(runner.deletingLastPathComponent().appendingPathComponent("forum-bench").path)
  }
  if let first = CommandLine.arguments.first {
    let runner = URL(fileURLWithPath: first).standardizedFileURL
    candidates.append(runner.deletingLastPathComponent().appendingPathComponent("forum-bench").path)
  }
  // A plain `swift build` / `swift test` in the package root.
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  candidates.append(root.appendingPathComponent(".build/debug/forum-bench").path)
  return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// A child process whose output goes to files, so that a chatty child can never block on a pipe.
final class Child {
  let process = ChildProcess()
  let stdoutPath: String
  let stderrPath: String

  init(_ executable: String, _ arguments: [String], outputPrefix: String) throws {
    stdoutPath = outputPrefix + ".out"
    stderrPath = outputPrefix + ".err"
    for path in [stdoutPath, stderrPath] {
      guard FileManager.default.createFile(atPath: path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
      }
    }
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
    process.standardError = FileHandle(forWritingAtPath: stderrPath)
  }

  func start() throws { try process.run() }

  /// Waits for the exit status; kills the child and returns nil after `timeout` seconds.
  func wait(timeout: TimeInterval) -> Int32? {
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
      if Date() > deadline {
        process.terminate()
        process.waitUntilExit()
        return nil
      }
      usleep(10_000)
    }
    process.waitUntilExit()
    return process.terminationStatus
  }

  var stdout: String { String(decoding: contents(of: stdoutPath) ?? [], as: UTF8.self) }
  var stderr: String { String(decoding: contents(of: stderrPath) ?? [], as: UTF8.self) }
}

@Suite("Concurrent writers")
struct ConcurrentWriteTests {
  @Test("two processes commenting on one thread at once lose nothing and never see a lock")
  func twoProcessesHammerOneDatabase() throws {
    let executable = try #require(
      benchExecutable(),
      Comment(
        rawValue: "forum-bench was not built next to the test runner "
          + "(\(Bundle.main.executableURL?.path ?? "?")); run `swift build` or set FORUM_BENCH"))
    let count = 300
    try withTemporaryDirectory { directory in
      let database = directory.file("hammer.sqlite")
      let children = try ["A", "B"].map { tag in
        try Child(
          executable, ["hammer", "--db", database, "--count", String(count), "--tag", tag],
          outputPrefix: directory.file("hammer-\(tag)"))
      }
      // Both start on a database that does not exist yet: they also race to create the schema
      // and the thread they comment on.
      for child in children { try child.start() }
      let statuses = children.map { $0.wait(timeout: 120) }

      for (child, status) in zip(children, statuses) {
        #expect(status == 0, "stdout: \(child.stdout) stderr: \(child.stderr)")
        #expect(!child.stderr.lowercased().contains("locked"), "\(child.stderr)")
        #expect(!child.stderr.lowercased().contains("busy"), "\(child.stderr)")
        #expect(child.stderr.isEmpty, "\(child.stderr)")
      }

      let store = try Datastore(path: database)
      let master = store.master
      let threads = try master.find(Query(className: "Thread"))
      #expect(threads.count == 1, "one thread, however the two raced to make it")
      let thread = try #require(threads.first)
      #expect(thread["commentCount"] == .int(Int64(2 * count)), "no increment lost")
      #expect(thread["lastCommentNumber"] == .int(Int64(2 * count)))
      #expect(try master.count(Query(className: "Comment")) == 2 * count)
      var objects: [DataObject] = []
      while true {
        let page = try master.find(
          Query(className: "Comment", order: ["createDate"], limit: 300, skip: objects.count))
        objects += page
        if page.count < 300 { break }
      }
      #expect(objects.count == 2 * count)
      #expect(Set(objects.map(\.objectId)).count == 2 * count)
      #expect(objects.allSatisfy { $0["thread"]?.pointerId == thread.objectId })
      let numbers = objects.compactMap { $0["number"]?.intValue }.sorted()
      #expect(numbers == Array(1...Int64(2 * count)), "every number handed out exactly once")
      for tag in ["A", "B"] {
        let mine = objects.filter { $0["tag"] == .string(tag) }
        #expect(mine.compactMap { $0["index"]?.intValue }.sorted() == Array(0..<Int64(count)))
        // Within one process the numbers rise with the index: each came with its own comment.
        let byIndex = mine.sorted { $0["index"]!.intValue! < $1["index"]!.intValue! }
        let mineNumbers = byIndex.compactMap { $0["number"]?.intValue }
        #expect(mineNumbers == mineNumbers.sorted())
      }
      // Each process signed in as its own user.
      #expect(try master.count(Query(className: User.className)) == 2)
    }
  }

  /// Switching a new file to WAL fails at once with "database is locked" when the other process
  /// holds its shared lock at that moment; SQLite calls no busy handler for it. One race in about
  /// eight lost on main, so thirty fresh boards opened in pairs almost surely meet it.
  @Test("two processes opening one new board at once both open it, thirty times")
  func twoProcessesCreateOneBoard() throws {
    let executable = try #require(benchExecutable())
    try withTemporaryDirectory { directory in
      for round in 0..<30 {
        let database = directory.file("new-\(round).sqlite")
        let children = try ["A", "B"].map { tag in
          try Child(
            executable, ["hammer", "--db", database, "--count", "1", "--tag", tag],
            outputPrefix: directory.file("new-\(round)-\(tag)"))
        }
        for child in children { try child.start() }
        for child in children {
          #expect(child.wait(timeout: 60) == 0, "round \(round): \(child.stderr)")
          #expect(child.stderr.isEmpty, "round \(round): \(child.stderr)")
        }
        let store = try Datastore(path: database)
        #expect(try store.master.count(Query(className: "Comment")) == 2, "round \(round)")
      }
    }
  }

  @Test func hammerRejectsBadCommandLines() throws {
    let executable = try #require(benchExecutable())
    try withTemporaryDirectory { directory in
      let database = directory.file("x.sqlite")
      for arguments in [
        ["hammer"], ["hammer", "--db", database, "--count", "0", "--tag", "A"],
        ["hammer", "--db", database, "--count", "many", "--tag", "A"],
        ["hammer", "--db", database, "--count", "5"],
        ["hammer", "--db", database, "--count", "5", "--tag", "A", "--fast"],
      ] {
        let child = try Child(executable, arguments, outputPrefix: directory.file("usage"))
        try child.start()
        #expect(child.wait(timeout: 30) == 2, "\(arguments)")
        #expect(child.stderr.contains("usage: forum-bench"))
      }
      #expect(!FileManager.default.fileExists(atPath: database))
    }
  }
}
