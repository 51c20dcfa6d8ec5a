import Foundation
import Spawning
import Testing

@testable import Datastore
@testable import Forum

/// The built `forum` executable: `$FORUM_BINARY`, or the `forum` next to this test bundle in the
/// products directory `swift test` used (`.build/debug/forum`, `--scratch-path X` → `X/debug/forum`).
enum ForumBinary {
  static let path: String? = locate()

  private static func locate() -> String? {
    let fileManager = FileManager.default
    if let given = ProcessInfo.processInfo.environment["FORUM_BINARY"], !given.isEmpty {
      return fileManager.isExecutableFile(atPath: given) ? given : nil
    }
    var starts: [URL] = []
    if let first = CommandLine.arguments.first, !first.isEmpty {
      starts.append(URL(fileURLWithPath: first).resolvingSymlinksInPath())
    }
    if let executable = Bundle.main.executableURL { starts.append(executable) }
    starts.append(Bundle.main.bundleURL)
    for start in starts {
      // Linux: debug/forumPackageTests.xctest is the test executable itself.
      // macOS: debug/forumPackageTests.xctest/Contents/MacOS/forumPackageTests.
      var directory = start.deletingLastPathComponent()
      for _ in 0..<5 {
        let candidate = directory.appendingPathComponent("forum").path
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: candidate, isDirectory: &isDirectory),
          !isDirectory.boolValue, fileManager.isExecutableFile(atPath: candidate)
        {
          return candidate
        }
        directory.deleteLastPathComponent()
      }
    }
    return nil
  }

  /// The binary's path, or a failure saying how to get one.
  static func require() throws -> String {
    guard let path else {
      throw ForumTestError(
        "the built `forum` executable was not found next to the test bundle "
          + "(\(CommandLine.arguments.first ?? "?")); run `swift build` first or set FORUM_BINARY")
    }
    return path
  }
}

struct ForumTestError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// What one run of `forum` did.
struct RunResult {
  let status: Int32
  let stdoutData: Data
  let stderrData: Data
  let arguments: [String]

  var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
  var stderr: String { String(decoding: stderrData, as: UTF8.self) }
  var stdoutLines: [String] {
    stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLastEmpty()
  }
  var stderrLines: [String] {
    stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLastEmpty()
  }

  /// stdout parsed as one JSON object.
  func json() throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: stdoutData) as? [String: Any] else {
      throw ForumTestError("stdout is not a JSON object: \(stdout.prefix(300))")
    }
    return object
  }

  /// stderr parsed as one JSON object.
  func jsonError() throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: stderrData) as? [String: Any] else {
      throw ForumTestError("stderr is not a JSON object: \(stderr.prefix(300))")
    }
    return object
  }

  /// A short account of the run for failure messages.
  var summary: String {
    "forum \(arguments.suffix(6).joined(separator: " ").prefix(120)) → exit \(status)\n"
      + "stdout: \(stdout.prefix(600))\nstderr: \(stderr.prefix(600))"
  }
}

extension Array where Element == String {
  fileprivate func dropLastEmpty() -> [String] {
    last == "" ? Array(dropLast()) : self
  }
}

/// One test's world: a temporary directory holding the database and the XDG/HOME directories, and
/// a way to run the built `forum` against it as one profile or another.
final class ForumFixture {
  let root: String
  let db: String
  let binary: String

  init() throws {
    binary = try ForumBinary.require()
    var template = Array((NSTemporaryDirectory() + "/ForumCLITests.XXXXXX").utf8CString)
    guard let created = mkdtemp(&template) else {
      throw ForumTestError("mkdtemp failed: \(String(cString: strerror(errno)))")
    }
    root = String(cString: created)
    db = root + "/board.sqlite"
    for name in ["home", "config", "state", "data"] {
      try FileManager.default.createDirectory(
        atPath: root + "/" + name, withIntermediateDirectories: true)
    }
  }

  deinit { try? FileManager.default.removeItem(atPath: root) }

  var configHome: String { root + "/config" }
  var stateHome: String { root + "/state" }
  var profilesDirectory: String { configHome + "/forum/profiles" }

  /// A clean environment: nothing inherited but PATH, so the developer's settings never leak in.
  func environment(lang: String = "C", extra: [String: String] = [:]) -> [String: String] {
    var environment = [
      "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
      "HOME": root + "/home", "XDG_CONFIG_HOME": configHome, "XDG_STATE_HOME": stateHome,
      "XDG_DATA_HOME": root + "/data", "LANG": lang,
      // A colour-capable TERM and no NO_COLOR: only the pipe may turn colour off.
      "TERM": "xterm-256color",
    ]
    environment.merge(extra) { _, new in new }
    return environment
  }

  /// Runs `forum --db DB --profile PROFILE ARGUMENTS…` with `input` on a pipe as stdin.
  @discardableResult
  func run(
    _ arguments: [String], profile: String? = "alice", input: Data = Data(), lang: String = "C",
    environment extra: [String: String] = [:], timeout: TimeInterval = 120,
    database: String? = nil, directory: String? = nil
  ) throws -> RunResult {
    var fullArguments = database == "" ? [] : ["--db", database ?? db]
    if let profile { fullArguments += ["--profile", profile] }
    fullArguments += arguments
    return try ForumFixture.launch(
      binary, arguments: fullArguments, environment: environment(lang: lang, extra: extra),
      input: input, timeout: timeout, directory: directory)
  }

  /// Runs a piped script: each string one line.
  @discardableResult
  func script(
    _ lines: [String], profile: String? = "alice", arguments: [String] = [], lang: String = "C",
    environment extra: [String: String] = [:]
  ) throws -> RunResult {
    let text = lines.map { $0 + "\n" }.joined()
    return try run(
      arguments, profile: profile, input: Data(text.utf8), lang: lang, environment: extra)
  }

  /// Runs and expects exit 0, recording the output when not.
  @discardableResult
  func ok(
    _ arguments: [String], profile: String? = "alice", input: Data = Data(),
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> RunResult {
    let result = try run(arguments, profile: profile, input: input)
    #expect(result.status == 0, "\(result.summary)", sourceLocation: sourceLocation)
    return result
  }

  static func launch(
    _ binary: String, arguments: [String], environment: [String: String], input: Data,
    timeout: TimeInterval, directory: String? = nil
  ) throws -> RunResult {
    ignoreSIGPIPE
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: binary)
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    process.arguments = arguments
    process.environment = environment
    let stdinPipe = Pipe()
    let stdoutPipe = Pipe()
    let stderrPipe = Pipe()
    process.standardInput = stdinPipe
    process.standardOutput = stdoutPipe
    process.standardError = stderrPipe
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()

    let collected = Collected()
    let readers = DispatchGroup()
    for (pipe, isStdout) in [(stdoutPipe, true), (stderrPipe, false)] {
      readers.enter()
      Thread.detachNewThread {
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        collected.set(data, stdout: isStdout)
        readers.leave()
      }
    }
    Thread.detachNewThread {
      // The child may stop reading early (EPIPE): that is its business, not a test failure.
      try? stdinPipe.fileHandleForWriting.write(contentsOf: input)
      try? stdinPipe.fileHandleForWriting.close()
    }
    if exited.wait(timeout: .now() + timeout) == .timedOut {
      process.terminate()
      kill(process.processIdentifier, SIGKILL)
      _ = exited.wait(timeout: .now() + 10)
      throw ForumTestError("forum \(arguments.joined(separator: " ").prefix(200)) timed out")
    }
    readers.wait()
    return RunResult(
      status: process.terminationStatus, stdoutData: collected.stdout,
      stderrData: collected.stderr, arguments: arguments)
  }

  /// Where `profile`'s unsent drafts for the board at `database` (the fixture's by default) are
  /// kept: under the board's id, then the profile's name.
  func draftsDirectory(profile: String = "alice", database: String? = nil) throws -> String {
    let store = try Datastore.open(database ?? db, rules: Board.rules, indexes: Board.indexes)
    return stateHome + "/forum/drafts/" + store.boardId + "/" + profile
  }

  /// Opens the fixture's database directly, as the backend's master key sees it.
  func openStore() throws -> Datastore {
    try Datastore.open(db, rules: Board.rules, indexes: Board.indexes)
  }

  /// Opens the board in this process as `profile` (the same user the CLI runs as).
  func openBoard(profile: String = "alice") throws -> Board {
    try Board(
      location: db, profile: profile, profiles: ProfileStore(directory: profilesDirectory))
  }

  /// Every stored thread, by number.
  func storedThreads() throws -> [DataObject] {
    let store = try openStore()
    return try store.master.find(Query(className: "Thread", order: ["number"], limit: 1000))
  }

  /// Every stored comment, thread by thread, by number.
  func storedComments() throws -> [DataObject] {
    let store = try openStore()
    return try store.master.find(Query(className: "Comment", order: ["number"], limit: 1000))
  }

  /// Stored comments of thread `number`.
  func storedComments(ofThread number: Int) throws -> [DataObject] {
    let store = try openStore()
    guard
      let thread = try store.master.find(
        Query(className: "Thread", equalTo: ["number": .int(Int64(number))])
      ).first
    else { return [] }
    return try store.master.find(
      Query(
        className: "Comment",
        equalTo: ["thread": .pointer(className: "Thread", objectId: thread.objectId)],
        order: ["number"], limit: 1000))
  }
}

private let ignoreSIGPIPE: Void = {
  signal(SIGPIPE, SIG_IGN)
}()

private final class Collected: @unchecked Sendable {
  private let lock = NSLock()
  private var out = Data()
  private var err = Data()

  func set(_ data: Data, stdout: Bool) {
    lock.lock()
    defer { lock.unlock() }
    if stdout { out = data } else { err = data }
  }

  var stdout: Data {
    lock.lock()
    defer { lock.unlock() }
    return out
  }

  var stderr: Data {
    lock.lock()
    defer { lock.unlock() }
    return err
  }
}

// MARK: - Checks shared by the tests

/// Terminal cells a string takes, by our own small East Asian Width table (wide and fullwidth
/// are 2, combining marks and zero-width characters 0, everything else 1). Independent of the
/// renderer's own table on purpose.
func displayWidth(_ text: String) -> Int {
  var cells = 0
  for scalar in text.unicodeScalars {
    let value = scalar.value
    switch value {
    case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F, 0x3099...0x309A: continue
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x3096, 0x309B...0x30FF, 0x3105...0x312F,
      0x3131...0x318E, 0x3190...0x31E3, 0x31F0...0x321E, 0x3220...0x3247, 0x3250...0x4DBF,
      0x4E00...0xA48C, 0xA490...0xA4C6, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F,
      0xFF01...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
      cells += 2
    default:
      cells += 1
    }
  }
  return cells
}

/// Characters that must never reach a terminal raw: C0 controls other than newline, DEL, C1
/// controls (U+0080…U+009F, which some terminals obey as CSI/OSC), bidi embeddings, overrides
/// and isolates, and the invisible marks LRM, RLM and ALM.
func dangerousScalars(in text: String) -> [Unicode.Scalar] {
  text.unicodeScalars.filter { scalar in
    let value = scalar.value
    let mark = value == 0x200E || value == 0x200F || value == 0x061C
    return (value < 0x20 && value != 0x0A) || (0x7F...0x9F).contains(value)
      || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) || mark
  }
}

/// Records an issue when `data` holds a raw ESC byte or text that could drive a terminal;
/// `--json` output escapes all of them.
func expectHarmless(
  _ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation
) {
  for (name, data) in [("stdout", result.stdoutData), ("stderr", result.stderrData)] {
    #expect(
      !data.contains(0x1B), "raw ESC in \(name) of \(result.arguments.suffix(4))",
      sourceLocation: sourceLocation)
    #expect(!data.contains(0x00), "raw NUL in \(name)", sourceLocation: sourceLocation)
    let text = String(decoding: data, as: UTF8.self)
    let bad = dangerousScalars(in: text)
    #expect(
      bad.isEmpty,
      "\(name) holds \(bad.prefix(5).map { "U+" + String($0.value, radix: 16, uppercase: true) })",
      sourceLocation: sourceLocation)
  }
}

extension Dictionary where Key == String, Value == Any {
  func int(_ key: String) -> Int? { (self[key] as? NSNumber)?.intValue }
  func string(_ key: String) -> String? { self[key] as? String }
  func objects(_ key: String) -> [[String: Any]] { self[key] as? [[String: Any]] ?? [] }
  func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }
}

/// Thread numbers of a `--json list` or the comment numbers of a `--json show`.
func numbers(_ objects: [[String: Any]]) -> [Int] { objects.compactMap { $0.int("number") } }
