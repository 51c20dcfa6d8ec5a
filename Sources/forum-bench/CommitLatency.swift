import CSQLite
import Datastore
import Forum
import Foundation

/// `forum-bench writes`' per-comment figures (issue 33): `Board.addComment` in this process on a
/// copy of the board, each comment timed from the call to its return (its one transaction and
/// commit), one `Board.tidy` step between comments as scripts run it (timed apart), beside
/// the floor: the comment's row alone in `objects` (triggers dropped, indexes kept) on another
/// copy of the same file, one `BEGIN IMMEDIATE … COMMIT` each through the C API, timed the same.
enum CommitLatency {
  /// The floor rows' `objectId`s.
  enum RowIds {
    /// As the engines make them (`DataObject.newObjectId`: 16 random characters, DESIGN §2),
    /// so each row's id lands on a random page of the id index, as a comment's does.
    case engines
    /// `r000000000000001`, `r000000000000002`, …: all on the id index's last page. No engine
    /// makes such ids; the bench's floor until W25.
    case sequential
  }

  struct Figures {
    var seconds: Double
    var latencies: [Double]
    var tidySeconds = 0.0
    var tidySteps = 0
    var longestStep = 0.0

    var rate: Double { Double(latencies.count) / seconds }

    func percentile(_ fraction: Double) -> Double {
      let sorted = latencies.sorted()
      return sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]
    }

    var line: String {
      String(
        format: "%.0f/s, commit p50 %.2f ms, p99 %.2f ms, max %.2f ms", rate,
        percentile(0.5) * 1000, percentile(0.99) * 1000, (latencies.max() ?? 0) * 1000)
    }
  }

  /// Comments by `Board.addComment` to thread `thread` of the board at `path`, tidying between.
  static func board(_ path: String, thread: Int, count: Int, scratch: String) throws -> Figures {
    let board = try Board(
      location: path, profile: "bench", profiles: ProfileStore(directory: scratch + "/profiles"))
    var figures = Figures(seconds: 0, latencies: [])
    figures.latencies.reserveCapacity(count)
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count {
      let before = DispatchTime.now().uptimeNanoseconds
      _ = try board.addComment(
        to: thread, text: "in-process comment number \(index) of the latency run, ordinary length")
      let after = DispatchTime.now().uptimeNanoseconds
      figures.latencies.append(Double(after - before) / 1e9)
      // One step between two comments, as a script runs them between two commands.
      if board.tidy() { figures.tidySteps += 1 }
      let tidied = Double(DispatchTime.now().uptimeNanoseconds - after) / 1e9
      figures.tidySeconds += tidied
      figures.longestStep = max(figures.longestStep, tidied)
    }
    figures.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return figures
  }

  /// The floor: the comment's row alone, `count` transactions on the file at `path`.
  static func rowAlone(
    _ path: String, thread: String, user: String, count: Int, ids: RowIds = .engines
  ) throws -> Figures {
    let database = try RawDatabase(path: path)
    let drops = try database.rows(
      "SELECT 'DROP TRIGGER \"' || name || '\"' FROM sqlite_schema WHERE type = 'trigger'")
    for drop in drops { try database.execute(drop[0]) }
    let insert = try RawStatement(
      database,
      """
      INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data)
      VALUES ('Comment', ?1, ?2, ?2, ' * ', ' ' || ?3 || ' ', ?4)
      """)
    let begin = try RawStatement(database, "BEGIN IMMEDIATE")
    let commit = try RawStatement(database, "COMMIT")
    let pointer = "{\"__type\":\"Pointer\",\"className\":\"Thread\",\"objectId\":\"\(thread)\"}"
    var figures = Figures(seconds: 0, latencies: [])
    figures.latencies.reserveCapacity(count)
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count {
      let data =
        "{\"text\":\"floor comment number \(index) of the latency run, ordinary length\","
        + "\"thread\":\(pointer),\"user\":{\"__type\":\"Pointer\",\"className\":\"user\","
        + "\"objectId\":\"\(user)\"},\"number\":\(index + 1)}"
      let before = DispatchTime.now().uptimeNanoseconds
      try step(begin)
      let objectId =
        switch ids {
        case .engines: DataObject.newObjectId()
        case .sequential: String(format: "r%015d", index)
        }
      insert.bind(.text(objectId), at: 1)
      insert.bind(.integer(Int64(Date().timeIntervalSince1970 * 1000)), at: 2)
      insert.bind(.text(user), at: 3)
      insert.bind(.text(data), at: 4)
      try step(insert)
      try step(commit)
      figures.latencies.append(Double(DispatchTime.now().uptimeNanoseconds - before) / 1e9)
    }
    figures.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return figures
  }

  private static func step(_ statement: RawStatement) throws {
    let code = sqlite3_step(statement.handle)
    sqlite3_reset(statement.handle)
    guard code == SQLITE_DONE else { throw BenchError("a floor statement failed (\(code))") }
  }
}
