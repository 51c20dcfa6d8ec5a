import Datastore
import Forum
import Foundation

/// `forum-bench private --db A --db B`: what `list` and `inbox` cost a viewer on boards that
/// differ in how many private posts of other people they hold (issue #11 item 5: on a board
/// where 90 % of a million posts are others' direct messages, both stay within 1.5x of a board
/// without them). The viewer is a fresh profile that first sends a few messages of its own, so
/// its inbox is not empty; that writes to the boards, which are bench boards.
enum PrivateReadsCommand {
  static func main(_ arguments: [String]) -> Int32 {
    do {
      let options = try Options(arguments, known: ["db", "repeats"])
      let paths = options.all("db")
      guard !paths.isEmpty else { throw UsageError("--db is required (one or more)") }
      let repeats = max(5, try options.int("repeats", fallback: 200)!)
      var rows: [(String, [String: Double])] = []
      for path in paths { rows.append((path, try measure(path, repeats: repeats))) }
      print(table(rows))
      return 0
    } catch {
      return reportFailure("private", error)
    }
  }

  static let figures = [
    "list page 1 (threads + count)", "list, last page", "inbox page 1", "show #1 page 1",
  ]

  /// Median and best milliseconds of each figure (`figure` and `figure + best`), each run
  /// `repeats` times in process. The best is what the work costs on a machine others share.
  static func measure(_ path: String, repeats: Int) throws -> [String: Double] {
    let directory = try makeTemporaryDirectory("forum-private")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let profiles = ProfileStore(directory: directory + "/profiles")
    let viewer = try Board(location: path, profile: "viewer", profiles: profiles)
    let others = try viewer.users(handlePrefix: "", limit: 4).filter {
      $0.objectId != viewer.myId
    }
    for (index, partner) in others.prefix(3).enumerated() {
      try viewer.sendMessage(to: partner.userName, text: "hello \(index)")
    }
    var results: [String: Double] = [:]
    func time(_ figure: String, _ body: () throws -> Void) throws {
      try body()  // warm the cache
      var samples: [Double] = []
      for _ in 0..<repeats {
        let start = monotonicSeconds()
        try body()
        samples.append((monotonicSeconds() - start) * 1000)
      }
      results[figure] = median(samples)
      results[figure + best] = samples.min() ?? 0
    }
    let total = try viewer.threadCount()
    let last = Board.lastPage(commentCount: total)
    let first = try viewer.thread(1)
    try time(figures[0]) {
      _ = try viewer.threads(page: 1)
      _ = try viewer.threadCount()
    }
    try time(figures[1]) { _ = try viewer.threads(page: last, total: try viewer.threadCount()) }
    try time(figures[2]) { _ = try viewer.conversations(page: 1) }
    try time(figures[3]) { _ = try viewer.comments(of: first, page: 1) }
    return results
  }

  static let best = ", best"

  static var figureRows: [String] { figures.flatMap { [$0, $0 + best] } }

  static func table(_ rows: [(String, [String: Double])]) -> String {
    var lines = [
      "| figure | "
        + rows.map { "`\(URL(fileURLWithPath: $0.0).lastPathComponent)`" }
        .joined(separator: " | ") + (rows.count > 1 ? " | last / first |" : " |")
    ]
    lines.append("|---|" + String(repeating: "---|", count: rows.count + (rows.count > 1 ? 1 : 0)))
    for figure in figureRows {
      let values = rows.map { $0.1[figure] ?? 0 }
      var line =
        "| \(figure) | "
        + values.map { String(format: "%.3f ms", $0) }
        .joined(separator: " | ")
      if rows.count > 1, let base = values.first, base > 0 {
        line += String(format: " | %.2fx", values.last! / base)
      }
      lines.append(line + " |")
    }
    return lines.joined(separator: "\n")
  }
}
