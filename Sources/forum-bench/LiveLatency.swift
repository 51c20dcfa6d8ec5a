import Datastore
import Forum
import Foundation
import Spawning

/// `forum-bench live`: how long a comment takes from its commit to the screen of someone else
/// at the prompt. A real `forum` runs in tmux as alice (in a thread, or in its chat room); this
/// process posts as bob through the Forum API, one comment at a time at random intervals, and
/// watches alice's terminal output (tmux `pipe-pane` into a FIFO, read as it comes) for each
/// comment's marker. The time from `addComment` returning (committed) to the marker's arrival is
/// one sample.
enum LiveLatency {
  static let usage =
    "usage: forum-bench live [--forum PATH] [--db PATH|URI] [--writer-db URI] [--posts N] "
    + "[--mode show|chat] [--writers N]"

  static func main(_ arguments: [String]) -> Int32 {
    do {
      let options = try Options(
        arguments, known: ["forum", "db", "writer-db", "posts", "mode", "writers"])
      let posts = try options.int("posts", fallback: 60)!
      let mode = options.string("mode") ?? "show"
      guard mode == "show" || mode == "chat" else { throw UsageError("--mode show or chat") }
      let forum = options.string("forum") ?? siblingForum()
      guard FileManager.default.isExecutableFile(atPath: forum) else {
        throw BenchError("no forum executable at \(forum) (give --forum PATH)")
      }
      let writers = max(1, try options.int("writers", fallback: 1)!)
      let samples = try measure(
        forum: forum, database: options.string("db"), writer: options.string("writer-db"),
        posts: posts, mode: mode, writers: writers)
      report(samples, mode: mode, writers: writers)
      return 0
    } catch {
      return reportFailure("live", error)
    }
  }

  /// The `forum` built next to this executable.
  static func siblingForum() -> String {
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("forum").path
  }

  static func measure(
    forum: String, database: String?, writer: String?, posts: Int, mode: String, writers: Int
  ) throws -> [Double] {
    let root = try makeTemporaryDirectory("forum-bench-live")
    defer { try? FileManager.default.removeItem(atPath: root) }
    let db = database ?? root + "/board.sqlite"
    let writerDB = writer ?? db
    for name in ["home", "config", "state"] {
      try FileManager.default.createDirectory(
        atPath: root + "/" + name, withIntermediateDirectories: true)
    }
    let environment = [
      "HOME": root + "/home", "XDG_CONFIG_HOME": root + "/config",
      "XDG_STATE_HOME": root + "/state", "LANG": "C.UTF-8", "TERM": "screen",
      "PATH": "/usr/bin:/bin", "TMUX_TMPDIR": root,
    ]
    // The thread, made by bob; alice opens it at her prompt.
    try run(
      forum, ["--db", writerDB, "--profile", "bob", "new", "--title", "latency"], environment)
    let bob = try Board(
      location: writerDB, profile: "bob",
      profiles: ProfileStore(directory: root + "/config/forum/profiles"))

    let tmux = ["/usr/bin/tmux", "-f", "/dev/null"]
    let command =
      ["/usr/bin/env", "-i"]
      + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
      + [forum, "--db", db, "--profile", "alice", "--no-pager"]
    // The tmux server forked by this client keeps every descriptor it inherits, among them the
    // one Foundation's Process watches for a child's end: close them all before tmux runs.
    let closeAndExec =
      "for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; "
      + "if [ \"$fd\" -gt 2 ]; then eval \"exec $fd>&-\"; fi; done 2>/dev/null; exec \"$@\""
    try run(
      "/bin/bash",
      ["-c", closeAndExec, "bash"] + tmux
        + ["new-session", "-d", "-s", "live", "-x", "120", "-y", "40"] + command, environment,
      quiet: true)
    defer { _ = try? run(tmux[0], Array(tmux.dropFirst()) + ["kill-server"], environment) }
    try waitForScreen(tmux, environment) { $0.contains("forum>") }
    let open = mode == "chat" ? "chat 1" : "show 1"
    try run(
      tmux[0], Array(tmux.dropFirst()) + ["send-keys", "-t", "live", open, "Enter"], environment)
    try waitForScreen(tmux, environment) { $0.contains(mode == "chat" ? "#1 chat>" : "forum #1>") }

    let fifo = root + "/pane"
    guard mkfifo(fifo, 0o600) == 0 else { throw BenchError("mkfifo failed") }
    let watcher = try OutputWatcher(fifo: fifo)
    try run(
      tmux[0], Array(tmux.dropFirst()) + ["pipe-pane", "-t", "live", "-o", "cat > \(fifo)"],
      environment)
    usleep(200_000)

    if writers > 1 {
      return try chat(
        writers: writers, posts: posts, location: writerDB,
        profiles: root + "/config/forum/profiles",
        watcher: watcher)
    }
    var samples: [Double] = []
    for index in 0..<posts {
      usleep(UInt32.random(in: 150_000...350_000))
      let marker = "lat-\(index)-x"
      try bob.addComment(to: 1, text: marker)
      let committed = Date().timeIntervalSince1970
      guard let seen = watcher.wait(for: marker, timeout: 5) else {
        throw BenchError("comment \(index) did not appear within 5 s")
      }
      samples.append(max(0, seen - committed) * 1000)
    }
    return samples
  }

  /// A chat room of `writers` people typing fast (issue 33): each its own `Board` (its own
  /// connection, as each person's `forum` has) on a thread of its own, posting a short line,
  /// waiting until it is on alice's screen, then typing the next for 100–400 ms; `posts` lines in
  /// all. One sample: from the moment a line is sent (before `addComment`, so its commit and any
  /// wait for another writer's lock count) to its arrival on alice's screen.
  static func chat(
    writers: Int, posts: Int, location: String, profiles: String, watcher: OutputWatcher
  ) throws -> [Double] {
    let boards = try (0..<writers).map {
      try Board(
        location: location, profile: "writer\($0)", profiles: ProfileStore(directory: profiles))
    }
    final class Shared: @unchecked Sendable {
      let lock = NSLock()
      var samples: [Double] = []
      var failure: String?
      var boards: [Board] = []
    }
    let shared = Shared()
    shared.boards = boards
    let group = DispatchGroup()
    for writer in 0..<writers {
      group.enter()
      Thread.detachNewThread {
        defer { group.leave() }
        let board = shared.boards[writer]
        for index in stride(from: writer, to: posts, by: writers) {
          usleep(UInt32.random(in: 100_000...400_000))
          let marker = "chat-\(writer)-\(index)-x"
          let sent = Date().timeIntervalSince1970
          do {
            try board.addComment(to: 1, text: marker)
          } catch {
            shared.lock.withLock { shared.failure = "\(marker): \(error)" }
            return
          }
          guard let seen = watcher.wait(for: marker, timeout: 5) else {
            shared.lock.withLock { shared.failure = "\(marker) did not appear within 5 s" }
            return
          }
          shared.lock.withLock { shared.samples.append(max(0, seen - sent) * 1000) }
        }
      }
    }
    group.wait()
    if let failure = shared.failure { throw BenchError(failure) }
    return shared.samples
  }

  static func report(_ samples: [Double], mode: String, writers: Int = 1) {
    let sorted = samples.sorted()
    func percentile(_ p: Double) -> Double {
      sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
    }
    if writers > 1 {
      print("send → alice's screen (\(mode)), \(writers) people typing, \(sorted.count) lines:")
    } else {
      print("commit → screen (\(mode)), \(sorted.count) comments:")
    }
    print(
      String(
        format: "  p50 %.1f ms   p95 %.1f ms   p99 %.1f ms   max %.1f ms   min %.1f ms",
        percentile(0.5), percentile(0.95), percentile(0.99), sorted.last ?? 0, sorted.first ?? 0))
  }

  /// Runs a program to its end and returns its output. The client that starts the tmux server
  /// must not hand it a pipe (the server would keep it open for ever): `quiet` sends its output
  /// to /dev/null.
  @discardableResult
  static func run(
    _ executable: String, _ arguments: [String], _ environment: [String: String],
    quiet: Bool = false
  ) throws -> String {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    process.standardOutput = quiet ? FileHandle.nullDevice : output
    process.standardError = quiet ? FileHandle.nullDevice : output
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = quiet ? Data() : output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
      throw BenchError("\(executable) \(arguments.prefix(4)) failed: \(text.prefix(300))")
    }
    return text
  }

  static func waitForScreen(
    _ tmux: [String], _ environment: [String: String], until condition: (String) -> Bool
  ) throws {
    for _ in 0..<200 {
      let screen = try run(
        tmux[0], Array(tmux.dropFirst()) + ["capture-pane", "-p", "-t", "live"], environment)
      if condition(screen) { return }
      usleep(50_000)
    }
    throw BenchError("forum did not reach its prompt in tmux")
  }
}

/// Reads a FIFO on a thread of its own and notes when each piece of text first arrived.
final class OutputWatcher: @unchecked Sendable {
  private let lock = NSCondition()
  private var text = ""
  private var arrivals: [(offset: Int, time: Double)] = []

  init(fifo: String) throws {
    // Read-write, so the open does not wait for a writer and reads never see end of file.
    let descriptor = open(fifo, O_RDWR)
    guard descriptor >= 0 else { throw BenchError("cannot open \(fifo)") }
    Thread.detachNewThread { [self] in
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 { return }
        let now = Date().timeIntervalSince1970
        lock.lock()
        text += String(decoding: buffer[0..<count], as: UTF8.self)
        arrivals.append((text.utf8.count, now))
        lock.broadcast()
        lock.unlock()
      }
    }
  }

  /// When `marker` first arrived (seconds since 1970), or nil after `timeout` seconds.
  func wait(for marker: String, timeout: Double) -> Double? {
    let deadline = Date().addingTimeInterval(timeout)
    lock.lock()
    defer { lock.unlock() }
    while true {
      if let range = text.range(of: marker) {
        let end = text.utf8.distance(from: text.utf8.startIndex, to: range.upperBound)
        return arrivals.first { $0.offset >= end }?.time
      }
      if !lock.wait(until: deadline) { return nil }
    }
  }
}
