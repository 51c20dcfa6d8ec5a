import CSpawn
import Foundation
import Testing

@testable import Datastore

/// A script stopped part-way (Ctrl-C, `kill`, a crash) leaves a log that says what it did: a person
/// re-runs the rest from it, and a post done but missing from the log would be posted twice.
/// Output into a file goes in blocks (issue #13), so each command's output must be written when
/// the command ends, not kept until 4 KB have gathered.
@Suite("a script interrupted part-way")
struct InterruptedScriptTests {
  @Test func everyPostDoneBeforeCtrlCIsInTheLog() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    // Far more lines than are posted before the signal: the script is still running then.
    let script = forum.root + "/script.txt"
    let log = forum.root + "/log.txt"
    try Data((1...20_000).map { "comment 1 post \($0)\n" }.joined().utf8).write(
      to: URL(fileURLWithPath: script))
    let pid = try InterruptedScriptTests.spawn(
      forum.binary, ["--db", forum.db, "--profile", "alice"], environment: forum.environment(),
      stdin: script, stdout: log)
    var status: Int32 = 0
    var running = true
    defer {
      if running {
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
      }
    }

    // Waits for progress in the database (not for a time), then interrupts mid-script.
    let connection = try Connection(path: forum.db)
    func postedNumbers() throws -> [Int64] {
      try connection.prepare(
        "SELECT json_extract(data, '$.number') FROM objects WHERE class = 'Comment'"
      ).rows([]) { $0.int(0) }
    }
    while running, try postedNumbers().count < 100 {
      usleep(10_000)
      running = waitpid(pid, &status, WNOHANG) == 0
    }
    #expect(running, "the script ended before it could be interrupted")
    if running { kill(pid, SIGINT) }
    while running && waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    running = false
    #expect(status & 0x7f == SIGINT, "status \(status)")

    let text = try String(contentsOfFile: log, encoding: .utf8)
    let logged = Set(
      text.split(separator: "\n").compactMap { line -> Int64? in
        guard line.hasPrefix("Posted 1/"), line.hasSuffix(".") else { return nil }
        return Int64(line.dropFirst("Posted 1/".count).dropLast())
      })
    let numbers = try postedNumbers()
    let missing = numbers.filter { !logged.contains($0) }
    // Only the comment being posted when the signal came may be done without its line.
    #expect(
      missing.count <= 1,
      "\(numbers.count) posted, \(missing.count) not in the log (first: \(missing.min() ?? 0))")
  }

  /// Starts `binary` as a shell would: stdin and stdout on files, no signal blocked or ignored
  /// (Foundation's Process passes on the test runner's blocked signals, SIGINT among them).
  static func spawn(
    _ binary: String, _ arguments: [String], environment: [String: String], stdin: String,
    stdout: String
  ) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    // None of the test process's other descriptors (another test's pipe kept open by this
    // child would hold that test's reader waiting for its end).
    cspawn_addclosefrom(&actions, 3)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([binary] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, binary, &actions, &attributes, argv, envp)
    guard spawned == 0 else { throw ForumTestError("cannot run \(binary): error \(spawned)") }
    return pid
  }
}

/// A script whose output cannot be written (a full disk) stops at the command whose answer was
/// lost, instead of going on posting with no log of what it did.
@Suite("a script with nowhere to write")
struct UnwritableOutputTests {
  @Test func aScriptStopsWhenItsOutputCannotBeWritten() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let shell = "\"$0\" --db \"$1\" --profile alice > /dev/full"
    let result = try ForumFixture.launch(
      "/bin/sh", arguments: ["-c", shell, forum.binary, forum.db],
      environment: forum.environment(),
      input: Data("comment 1 one\ncomment 1 two\ncomment 1 three\n".utf8), timeout: 60)
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderrLines.count == 1, "\(result.summary)")
    #expect(result.stderr.hasPrefix("forum: cannot write output"), "\(result.summary)")
    let board = try forum.openBoard()
    #expect(try board.thread(1).commentCount == 1)
  }
}
