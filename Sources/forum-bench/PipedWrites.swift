import Datastore
import Foundation
import Spawning

/// `forum-bench writes`: piped comments (`comment N TEXT` lines into one `forum` process) on a
/// copy of a seeded board, beside their floor: the sqlite3 shell doing the same work for each
/// comment in its own transaction (the row, its thread's counters, its search row, its feed
/// row) on another copy with the triggers dropped (the indexes kept). Rounds alternate the two;
/// medians. The size of the file after the writes is reported too (issue 20).
enum PipedWrites {
  struct Settings {
    var database: String
    var forum: String
    var sqlite3: String
    var count: Int
    var rounds: Int
    var thread: Int
    /// Comments of the in-process run timed one by one (`CommitLatency`); 0 skips it.
    var latency: Int
  }

  static func main(_ arguments: [String]) -> Int32 {
    do {
      let options = try Options(
        arguments, known: ["db", "forum", "sqlite3", "count", "rounds", "thread", "latency"])
      guard let database = options.string("db"), FileManager.default.fileExists(atPath: database)
      else { throw UsageError("--db names a seeded board (forum-bench seed)") }
      let settings = Settings(
        database: database,
        forum: options.string("forum") ?? (RunCommand.executableDirectory() + "/forum"),
        sqlite3: options.string("sqlite3") ?? "/usr/bin/sqlite3",
        count: max(1, try options.int("count", fallback: 2000)!),
        rounds: max(1, try options.int("rounds", fallback: 3)!),
        thread: max(1, try options.int("thread", fallback: 3)!),
        latency: max(0, try options.int("latency", fallback: 10_000)!))
      print(RunCommand.machineDescription())
      print(try run(settings))
      return 0
    } catch {
      return reportFailure("writes", error)
    }
  }

  static func run(_ settings: Settings) throws -> String {
    let scratch = try makeTemporaryDirectory("forum-bench-writes")
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    var environment: [String: String] = [
      "PATH": "/usr/bin:/bin", "HOME": scratch, "XDG_CONFIG_HOME": scratch + "/config",
      "XDG_DATA_HOME": scratch + "/data", "XDG_STATE_HOME": scratch + "/state",
      "LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb",
    ]
    environment["FORUM_PROFILE"] = "bench"
    var forumRates: [Double] = []
    var forumCPU: [Double] = []
    var floorRates: [Double] = []
    var sizes: [String] = []
    for round in 0..<settings.rounds {
      // forum: a fresh copy, signed in once (that write is not timed), then the piped lines.
      let board = scratch + "/forum-\(round).db"
      try copyBoard(settings.database, to: board)
      _ = try runProcess(settings.forum, ["--db", board, "list"], environment: environment)
      let before = fileSize(board)
      let lines = (0..<settings.count).map {
        "comment \(settings.thread) piped comment number \($0) of round \(round), ordinary length\n"
      }.joined()
      let cpuBefore = childrenCPUSeconds()
      let seconds = try runProcess(
        settings.forum, ["--db", board], input: lines, environment: environment)
      forumRates.append(Double(settings.count) / seconds)
      forumCPU.append((childrenCPUSeconds() - cpuBefore) / Double(settings.count))
      sizes.append(
        "round \(round + 1): \(before) → \(fileSize(board)) bytes after \(settings.count) comments")
      removeBoard(board)

      // The floor: the same rows by the sqlite3 shell, no triggers.
      let floorBoard = scratch + "/floor-\(round).db"
      try copyBoard(settings.database, to: floorBoard)
      let (thread, user) = try threadAndUser(floorBoard, number: settings.thread)
      let drops = try shellOutput(
        settings.sqlite3,
        [
          floorBoard,
          "SELECT 'DROP TRIGGER \"' || name || '\";' FROM sqlite_schema WHERE type = 'trigger'",
        ])
      _ = try runProcess(settings.sqlite3, [floorBoard], input: drops, environment: environment)
      let script = floorScript(count: settings.count, thread: thread, user: user, round: round)
      let floorSeconds = try runProcess(
        settings.sqlite3, [floorBoard], input: script, environment: environment)
      floorRates.append(Double(settings.count) / floorSeconds)
      removeBoard(floorBoard)
    }
    let forum = median(forumRates)
    let floor = median(floorRates)
    var latency = ""
    if settings.latency > 0 {
      // The same file twice: the board's comments, then the comment's row alone.
      let board = scratch + "/latency.db"
      try copyBoard(settings.database, to: board)
      let figures = try CommitLatency.board(
        board, thread: settings.thread, count: settings.latency, scratch: scratch)
      let (thread, user) = try threadAndUser(board, number: settings.thread)
      removeBoard(board)
      func rowAlone(_ ids: CommitLatency.RowIds) throws -> CommitLatency.Figures {
        let rowBoard = scratch + "/row-alone.db"
        try copyBoard(settings.database, to: rowBoard)
        defer { removeBoard(rowBoard) }
        return try CommitLatency.rowAlone(
          rowBoard, thread: thread, user: user, count: settings.latency, ids: ids)
      }
      let row = try rowAlone(.engines)
      let sequential = try rowAlone(.sequential)
      latency = """

        \(settings.latency) comments in this process (`Board.addComment`, one transaction each, \
        a `Board.tidy` step between them): \(figures.line); \(figures.tidySteps) merge steps, \
        \(String(format: "%.2f", figures.tidySeconds)) s of tidying in all, the longest \
        \(String(format: "%.2f", figures.longestStep * 1000)) ms
        floor, the comment's row alone in `objects` (triggers dropped, its id as the engines \
        make them), same file: \(row.line)
        piped forum takes \(String(format: "%.2f", row.rate / forum))x the row alone's time; \
        in process \(String(format: "%.2f", row.rate / figures.rate))x
        the same rows with sequential ids (no engine makes them; all on the id index's last \
        page): \(sequential.line); piped forum \(String(format: "%.2f", sequential.rate / forum))x
        """
    }
    return """
      piped comments on a copy of \(settings.database), \(settings.count) a round, \(settings.rounds) rounds
      forum (one process; the lines waiting in the pipe committed together, 64 at most): \(String(format: "%.0f", forum)) comments/s \
      (rounds: \(forumRates.map { String(format: "%.0f", $0) }.joined(separator: ", ")))
      floor (sqlite3 shell, row + counters + search row + feed row a transaction): \
      \(String(format: "%.0f", floor)) commits/s (rounds: \(floorRates.map { String(format: "%.0f", $0) }.joined(separator: ", ")))
      forum takes \(String(format: "%.2f", floor / forum))x the floor's time; its CPU (user + sys) \
      \(String(format: "%.3f", median(forumCPU) * 1000)) ms a comment
      \(sizes.joined(separator: "\n"))\(latency)
      """
  }

  /// The floor's SQL: per comment, in its own transaction, what a comment must write.
  static func floorScript(count: Int, thread: String, user: String, round: Int) -> String {
    let now = "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"
    var script = "PRAGMA synchronous = NORMAL;\n"
    for index in 0..<count {
      // Ids as the engines make them (`CommitLatency.RowIds.engines`).
      let id = DataObject.newObjectId()
      let text = "piped comment number \(index) of round \(round), ordinary length"
      let pointer =
        "{\"__type\":\"Pointer\",\"className\":\"Thread\",\"objectId\":\"\(thread)\"}"
      let data =
        "{\"text\":\"\(text)\",\"thread\":\(pointer),\"user\":{\"__type\":\"Pointer\","
        + "\"className\":\"user\",\"objectId\":\"\(user)\"},\"number\":\(index + 1)}"
      script += """
        BEGIN IMMEDIATE;
        INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
          VALUES ('Comment', '\(id)', \(now), \(now), ' * ', ' \(user) ', '\(data)');
        UPDATE objects SET counts = json_set(counts,
            '$.commentCount', json_extract(counts, '$.commentCount') + 1,
            '$.lastCommentNumber', json_extract(counts, '$.lastCommentNumber') + 1,
            '$.lastActivity', \(now))
          WHERE class = 'Thread' AND objectId = '\(thread)';
        INSERT INTO search_text(rowid, body) VALUES (last_insert_rowid(), '\(text)');
        INSERT INTO changes(class, objectId, kind, parentId, readers)
          VALUES ('Comment', '\(id)', 1, '\(thread)', ' * ');
        COMMIT;

        """
    }
    return script
  }

  /// User and system CPU seconds of the children this process has waited for.
  static func childrenCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }

  static func threadAndUser(_ path: String, number: Int) throws -> (String, String) {
    let output = try shellOutput(
      "/usr/bin/sqlite3",
      [
        path,
        "SELECT objectId || ' ' || json_extract(data, '$.user.objectId') FROM objects "
          + "WHERE class = 'Thread' AND json_extract(data, '$.number') = \(number)",
      ]
    ).split(separator: " ")
    guard output.count == 2 else { throw BenchError("\(path) has no thread #\(number)") }
    return (String(output[0]), String(output[1]).trimmingCharacters(in: .whitespacesAndNewlines))
  }

  /// Copies a board and writes the copy to the disk before anything is timed: a fresh copy's
  /// gigabyte of dirty pages would otherwise be flushed by the first checkpoint's `fdatasync`
  /// inside the measured run (a board in use has none).
  static func copyBoard(_ source: String, to destination: String) throws {
    for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
      try FileManager.default.copyItem(atPath: source + suffix, toPath: destination + suffix)
      let descriptor = open(destination + suffix, O_RDONLY)
      guard descriptor >= 0, fsync(descriptor) == 0 else {
        if descriptor >= 0 { close(descriptor) }
        throw BenchError("cannot write \(destination + suffix) to the disk")
      }
      close(descriptor)
    }
  }

  static func removeBoard(_ path: String) {
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: path + suffix)
    }
  }

  static func fileSize(_ path: String) -> Int {
    ["", "-wal"].reduce(0) { total, suffix in
      total
        + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0)
    }
  }

  static func shellOutput(_ program: String, _ arguments: [String]) throws -> String {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw BenchError("\(program) \(arguments.joined(separator: " ")) failed")
    }
    return String(decoding: data, as: UTF8.self)
  }

  /// Runs `program` with `input` on its stdin and its output dropped; the seconds it took.
  @discardableResult
  static func runProcess(
    _ program: String, _ arguments: [String], input: String = "", environment: [String: String]
  ) throws -> Double {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.environment = environment
    let stdin = Pipe()
    process.standardInput = stdin
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    let start = Date()
    try process.run()
    let bytes = Data(input.utf8)
    let writer = Thread {
      stdin.fileHandleForWriting.write(bytes)
      try? stdin.fileHandleForWriting.close()
    }
    writer.start()
    let errorText = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = Date().timeIntervalSince(start)
    guard process.terminationStatus == 0 else {
      throw BenchError(
        "\(program) \(arguments.joined(separator: " ")) failed: "
          + String(decoding: errorText.prefix(500), as: UTF8.self))
    }
    return seconds
  }
}
