import CSQLite
import Datastore
import Forum
import Foundation

/// `forum-bench run`: measures a seeded board as people use it (one-shot `forum` processes) and
/// as the board API serves it (in-process `Board` calls), each beside its floor: the start-up of
/// trivial programs, and the very SQL the Datastore ran, replayed through the SQLite C API.
enum RunCommand {
  struct Settings {
    var databases: [String]
    var forum: String
    /// The floors' programs: a trivial static Swift program and the sqlite3 shell.
    var noop: String
    var sqlite3: String
    var repeats: Int
    var bigThread: Int
    var smallThread: Int
    /// The thread that `addComment` writes to: neither of the measured ones.
    var commentThread: Int
  }

  static func main(_ arguments: [String]) -> Int32 {
    do {
      let settings = try parse(arguments)
      SQLCapture.install()
      let context = try Context(settings: settings)
      defer { try? FileManager.default.removeItem(atPath: context.scratch) }
      print(machineDescription() + "\nforum binary: \(settings.forum)\n")
      var results: [BoardResult] = []
      for database in settings.databases {
        let result = try BoardBenchmark(database: database, context: context).run()
        print(result.table.text)
        print(result.sql)
        results.append(result)
      }
      if results.count > 1 { print(growth(results)) }
      return 0
    } catch {
      return reportFailure("run", error)
    }
  }

  /// Searches measured on a seeded board: a word in many posts (trigram index, newest first),
  /// a two-character Japanese word (LIKE), a word in no post, two words together, and the worst
  /// case: two characters in no post (LIKE reads every post).
  static let searchQueries = [["keyboard"], ["天気"], ["zebra"], ["keyboard", "天気"], ["zq"]]

  static func parse(_ arguments: [String]) throws -> Settings {
    let options = try Options(
      arguments,
      known: ["db", "forum", "sqlite3", "repeats", "big-thread", "small-thread", "comment-thread"])
    let databases = options.all("db")
    guard !databases.isEmpty else { throw UsageError("--db is required") }
    for database in databases where !FileManager.default.fileExists(atPath: database) {
      throw UsageError("\(database) does not exist; make it with forum-bench seed")
    }
    let forum = options.string("forum") ?? (executableDirectory() + "/forum")
    guard FileManager.default.isExecutableFile(atPath: forum) else {
      throw UsageError(
        "no forum binary at \(forum); build it (swift build -c release --product forum) or "
          + "pass --forum PATH")
    }
    let noop = executableDirectory() + "/bench-noop"
    guard FileManager.default.isExecutableFile(atPath: noop) else {
      throw UsageError("no bench-noop at \(noop); build it (swift build -c release)")
    }
    let sqlite3 = options.string("sqlite3") ?? "/usr/bin/sqlite3"
    guard FileManager.default.isExecutableFile(atPath: sqlite3) else {
      throw UsageError(
        "no sqlite3 shell at \(sqlite3); install Debian's sqlite3 or pass --sqlite3 PATH")
    }
    return Settings(
      databases: databases, forum: forum, noop: noop, sqlite3: sqlite3,
      repeats: max(3, try options.int("repeats", fallback: 15)!),
      bigThread: try options.int("big-thread", fallback: 1)!,
      smallThread: try options.int("small-thread", fallback: 2)!,
      commentThread: try options.int("comment-thread", fallback: 3)!)
  }

  static func executablePath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? CommandLine.arguments[0]
  }

  static func executableDirectory() -> String {
    (executablePath() as NSString).deletingLastPathComponent
  }

  /// CPU, cores, memory, kernel and SQLite, for the record.
  static func machineDescription() -> String {
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model =
      cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
      .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) }
      ?? "unknown CPU"
    let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
    var names = utsname()
    uname(&names)
    let kernel = withUnsafeBytes(of: &names.release) {
      String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
    }
    return "machine: \(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
      + String(format: "%.0f GB RAM", memory)
      + ", Linux \(kernel), SQLite \(String(cString: sqlite3_libversion()))"
  }

  /// Each figure of the first table beside the same figure on the other boards.
  static func growth(_ results: [BoardResult]) -> String {
    // The first line of a figure carries its value; the lines after it only add floors.
    let values = results.map { result in
      Dictionary(
        result.table.lines.filter(\.showsGrowth).map { ($0.figure, $0.value) },
        uniquingKeysWith: { first, _ in first })
    }
    var seen: Set<String> = []
    let figures = results[0].table.lines.filter(\.showsGrowth).map(\.figure).filter {
      seen.insert($0).inserted
    }
    let rows = figures.compactMap { figure -> [String]? in
      let row = values.compactMap { $0[figure] }
      guard row.count == results.count, let first = row.first, let last = row.last else {
        return nil
      }
      var ratio = last.number / first.number
      if case .perSecond = first { ratio = 1 / ratio }
      return [figure] + row.map(\.text) + [format(ratio: ratio)]
    }
    let header = ["measurement"] + results.map(\.label) + ["last / first"]
    return "Growth (\"x\" above 1 means slower or bigger on the last board)\n\n"
      + markdown([header] + rows)
  }
}

/// Shared by every board: the settings, a scratch directory, and the environment the `forum`
/// child processes get (their own XDG directories, so they sign in as the bench's profile).
struct Context {
  let settings: RunCommand.Settings
  let scratch: String
  let environment: [String: String]
  let profiles: ProfileStore

  init(settings: RunCommand.Settings) throws {
    self.settings = settings
    scratch = try makeTemporaryDirectory("forum-bench-run")
    for folder in ["home", "config", "data", "state"] {
      try FileManager.default.createDirectory(
        atPath: scratch + "/" + folder, withIntermediateDirectories: true)
    }
    environment = [
      "PATH": "/usr/bin:/bin", "HOME": scratch + "/home", "XDG_CONFIG_HOME": scratch + "/config",
      "XDG_DATA_HOME": scratch + "/data", "XDG_STATE_HOME": scratch + "/state",
      "LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb",
    ]
    profiles = ProfileStore(directory: ProfileStore.defaultDirectory(environment: environment))
  }

}

struct BoardResult {
  let label: String
  let table: Table
  let sql: String
}

/// Every measurement of one board.
struct BoardBenchmark {
  let path: String
  let context: Context
  var settings: RunCommand.Settings { context.settings }

  /// The board named `original`, measured on a copy in the scratch directory: the posts this
  /// run writes never reach the seeded file, so every run starts from the same board.
  let original: String

  init(database: String, context: Context) throws {
    original = URL(fileURLWithPath: database).standardizedFileURL.path
    path = context.scratch + "/board-\(UUID().uuidString.prefix(8)).db"
    for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: original + suffix) {
      try FileManager.default.copyItem(atPath: original + suffix, toPath: path + suffix)
    }
    self.context = context
  }

  func run() throws -> BoardResult {
    defer {
      for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
      }
    }
    return try measureAll()
  }

  /// Everything, with the board and its connections closed on return.
  private func measureAll() throws -> BoardResult {
    let board = try Board(location: path, profile: "default", profiles: context.profiles)
    // The Datastore's own figure needs a client; Board keeps its own inside Forum.
    let (client, _) = try Datastore.open(path, rules: Board.rules, indexes: Board.indexes)
      .signIn(profile: "default", in: context.profiles)
    let raw = try RawDatabase(path: path)
    let threadCount = try client.count(Query(className: "Thread"))
    let commentCount = try client.count(Query(className: "Comment"))
    let big = try board.thread(settings.bigThread)
    let small = try board.thread(settings.smallThread)
    try verify(board, big: big, small: small, threadCount: threadCount)
    let fileBytes = [path, path + "-wal"].compactMap {
      (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int
    }.reduce(0, +)
    let label = "\(grouped(threadCount + commentCount)) posts"
    let deepPage = Board.lastPage(commentCount: threadCount)
    let bigLastPage = Board.lastPage(commentCount: big.commentCount)
    var table = Table(
      title:
        "### \(label): \(original)\n\n\(grouped(threadCount)) threads, \(grouped(commentCount)) "
        + "comments, \(Quantity.bytes(fileBytes).text) on disk; thread #\(big.number) has "
        + "\(grouped(big.commentCount)) comments, #\(small.number) has \(small.commentCount); "
        + "last pages: list \(deepPage), #\(big.number) \(bigLastPage). "
        + "Medians of \(settings.repeats) runs.")
    var sql =
      "SQL the Datastore ran for each figure (captured with sqlite3_trace_v2), with "
      + "EXPLAIN QUERY PLAN:\n"

    // One-shot processes, before this run writes anything, round-robin with their floors so
    // that a busy moment on the machine weighs on both. The warm-up round creates the empty
    // board and signs the profile in there.
    let forum = settings.forum
    let shell = ShellQueries(board: board, big: big)
    let middlePage = max(1, bigLastPage / 2)
    let commands =
      [
        Command(path: "/bin/true", arguments: []),
        Command(path: settings.noop, arguments: []),
        Command(path: RunCommand.executablePath(), arguments: ["noop"]),
        Command(path: settings.sqlite3, arguments: ["-version"]),
        Command(path: forum, arguments: ["--version"]),
        Command(path: forum, arguments: ["--db", context.scratch + "/empty.db", "list"]),
        Command(path: settings.sqlite3, arguments: [path, shell.list]),
        Command(path: forum, arguments: ["--db", path, "list"]),
        Command(path: settings.sqlite3, arguments: [path, shell.show]),
        Command(path: forum, arguments: ["--db", path, "show", "\(small.number)"]),
        Command(path: forum, arguments: ["--db", path, "show", "\(big.number)"]),
        Command(path: forum, arguments: ["--db", path, "show", "\(big.number)", "--page", "last"]),
        Command(
          path: forum,
          arguments: ["--db", path, "show", "\(big.number)", "--page", "\(middlePage)"]),
        Command(path: forum, arguments: ["--db", path, "list", "--page", "\(deepPage)"]),
      ]
      + RunCommand.searchQueries.map {
        Command(path: forum, arguments: ["--db", path, "search"] + $0)
      }
      + [
        // The floors that do what `list` and `show` now do too (issue #12): unread counts, and
        // the read position moved past the page shown; and a page already read, which writes
        // nothing.
        Command(path: settings.sqlite3, arguments: [path, shell.listWithUnread]),
        Command(path: settings.sqlite3, arguments: [path, shell.showAndMark]),
        Command(path: forum, arguments: ["--db", path, "show", "\(big.number)", "--page", "1"]),
      ]
    let times = try measureProcesses(
      commands, environment: context.environment, repeats: settings.repeats)
    let (bare, staticSwift, dynamicSwift, sqliteVersion) = (times[0], times[1], times[2], times[3])
    let (version, emptyList, sqliteList, list) = (times[4], times[5], times[6], times[7])
    let (sqliteShow, showSmall, showBig, showBigLast) = (times[8], times[9], times[10], times[11])
    let (showBigMiddleProcess, deepList) = (times[12], times[13])
    let afterSearch = 14 + RunCommand.searchQueries.count
    let (sqliteListUnread, sqliteShowMark) = (times[afterSearch], times[afterSearch + 1])
    let showBigAgain = times[afterSearch + 2]
    let peaks = try [4, 7, 10, 11, 13].map {
      try peakResidentBytes(
        commands[$0], environment: context.environment, scratch: context.scratch)
    }
    let versionFigure = "`forum --version` (start, no DB)"
    table.lines += [
      Line(
        figure: versionFigure, value: .seconds(version), floorName: "`/bin/true`",
        floor: .seconds(bare)),
      Line(
        figure: versionFigure, value: .seconds(version),
        floorName: "`bench-noop` (static Swift start)", floor: .seconds(staticSwift)),
      Line(
        figure: versionFigure, value: .seconds(version), floorName: "`sqlite3 -version`",
        floor: .seconds(sqliteVersion), target: .ratioAtMost(1.5)),
      Line(
        figure: "`bench-noop` (static Swift start)", value: .seconds(staticSwift),
        floorName: "`sqlite3 -version`", floor: .seconds(sqliteVersion)),
      Line(
        figure: "`forum-bench noop` (dynamic Swift + Foundation)", value: .seconds(dynamicSwift),
        floorName: "`sqlite3 -version`", floor: .seconds(sqliteVersion)),
    ]
    let listFigure = "`forum list` (one process)"
    table.lines += [
      Line(
        figure: listFigure, value: .seconds(list), floorName: "`sqlite3` shell, same rows",
        floor: .seconds(sqliteList), target: .ratioAtMost(2)),
      Line(
        figure: listFigure, value: .seconds(list),
        floorName: "`sqlite3` shell, same rows and unread counts",
        floor: .seconds(sqliteListUnread), target: .ratioAtMost(2)),
      Line(
        figure: listFigure, value: .seconds(list), floorName: "`forum --version` (no DB)",
        floor: .seconds(version)),
      Line(
        figure: listFigure, value: .seconds(list), floorName: "`forum list`, empty board",
        floor: .seconds(emptyList), target: .ratioAtMost(1.5)),
      Line(
        figure: "`forum list --page \(deepPage)` (last page, one process)",
        value: .seconds(deepList), floorName: "`forum list`", floor: .seconds(list),
        target: .ratioAtMost(1.5)),
    ]
    let smallName = "`forum show \(small.number)`"
    let bigFigure = "`forum show \(big.number)` (one process)"
    table.lines += [
      Line(
        figure: bigFigure, value: .seconds(showBig), floorName: "`sqlite3` shell, same rows",
        floor: .seconds(sqliteShow), target: .ratioAtMost(2)),
      Line(
        figure: bigFigure, value: .seconds(showBig),
        floorName: "`sqlite3` shell, next page and read position written",
        floor: .seconds(sqliteShowMark), target: .ratioAtMost(2)),
      Line(
        figure: "`forum show \(big.number) --page 1` (read already, one process)",
        value: .seconds(showBigAgain), floorName: "`sqlite3` shell, same rows",
        floor: .seconds(sqliteShow), target: .ratioAtMost(2)),
      Line(
        figure: bigFigure, value: .seconds(showBig), floorName: smallName,
        floor: .seconds(showSmall), target: .ratioAtMost(1.5)),
      Line(
        figure: smallName + " (one process)", value: .seconds(showSmall),
        floorName: "`forum --version` (no DB)", floor: .seconds(version)),
      Line(
        figure: "`forum show \(big.number) --page \(middlePage)` (middle, one process)",
        value: .seconds(showBigMiddleProcess), floorName: "`forum show \(big.number)`",
        floor: .seconds(showBig), target: .ratioAtMost(1.5)),
      Line(
        figure: "`forum show \(big.number) --page last` (one process)",
        value: .seconds(showBigLast), floorName: "`forum show \(big.number)`",
        floor: .seconds(showBig), target: .ratioAtMost(1.5)),
    ]

    // Issue #12: a one-shot search beside a one-shot list, for each kind of query.
    for (index, query) in RunCommand.searchQueries.enumerated() {
      table.lines.append(
        Line(
          figure: "`forum search \(query.joined(separator: " "))` (one process)",
          value: .seconds(times[14 + index]), floorName: "`forum list`", floor: .seconds(list),
          target: .ratioAtMost(1.5)))
    }

    let binaryBytes = (try FileManager.default.attributesOfItem(atPath: forum))[.size] as? Int ?? 0
    table.lines.append(
      Line(
        figure: "`forum` binary size", value: .bytes(binaryBytes),
        target: .atMost(.bytes(25_000_000)), showsGrowth: false))

    // In-process reads beside the same SQL through the C API.
    func compare(_ figure: String, _ body: () throws -> Void) throws -> Double {
      let statements = try SQLCapture.record(body)
      let replay = try RawReplay(statements, on: raw)
      let (value, floor) = try measurePair(repeats: settings.repeats, body) { try replay.run() }
      table.lines.append(
        Line(
          figure: figure, value: .seconds(value),
          floorName: "same SQL via C API (\(statements.count) statements)",
          floor: .seconds(floor), target: .ratioAtMost(1.3)))
      sql += try describe(figure, statements, raw)
      return value
    }
    let listFirst = try compare("list page 1 (`Board.threads`)") { _ = try board.threads(page: 1) }
    // As `list --page N` reads it: with the thread count it needs for "page N/M" anyway.
    let listDeep = try compare("list, last page (`threads(page:total:)`)") {
      _ = try board.threads(page: deepPage, total: threadCount)
    }
    _ = try compare("list, last page by offset (`threads(page:)`)") {
      _ = try board.threads(page: deepPage)
    }
    _ = try compare("thread count (`Board.threadCount`, for page N/M)") {
      _ = try board.threadCount()
    }
    // Issue #12: in-process search beside the same statements (the FTS query among them) raw.
    for query in RunCommand.searchQueries {
      _ = try compare("search \(query.joined(separator: " ")) (`Board.search`)") {
        _ = try board.search(query)
      }
    }
    // Issue #2's figure: the Datastore alone, the 20 newest readable objects of the largest class.
    _ = try compare("20 newest Comments (`DatastoreClient.find`)") {
      _ = try client.find(Query(className: "Comment", order: ["-createDate"], limit: 20))
    }
    let showBigFirst = try compare("show #\(big.number) page 1 (`thread` + `comments`)") {
      _ = try board.comments(of: try board.thread(big.number), page: 1)
    }
    let showBigEnd = try compare("show #\(big.number), last page") {
      _ = try board.comments(of: try board.thread(big.number), page: bigLastPage)
    }
    let showBigMiddle = try compare("show #\(big.number), middle page (\(middlePage))") {
      _ = try board.comments(of: try board.thread(big.number), page: middlePage)
    }
    let showSmallFirst = try compare("show #\(small.number) page 1") {
      _ = try board.comments(of: try board.thread(small.number), page: 1)
    }
    // Deep pages stay flat: a page costs what the first does, however far in it is.
    for (figure, value, floorName, floor) in [
      ("list, last page vs page 1", listDeep, "list page 1", listFirst),
      (
        "show #\(big.number), middle page vs page 1", showBigMiddle, "show #\(big.number) page 1",
        showBigFirst
      ),
      (
        "show #\(big.number), last page vs page 1", showBigEnd, "show #\(big.number) page 1",
        showBigFirst
      ),
    ] {
      table.lines.append(
        Line(
          figure: figure, value: .seconds(value), floorName: floorName,
          floor: .seconds(floor), target: .ratioAtMost(1.5), showsGrowth: false))
    }
    for (figure, value) in [
      ("show #\(big.number) page 1 vs #\(small.number)", showBigFirst),
      ("show #\(big.number), last page vs #\(small.number)", showBigEnd),
    ] {
      table.lines.append(
        Line(
          figure: figure, value: .seconds(value), floorName: "show #\(small.number) page 1",
          floor: .seconds(showSmallFirst), target: .ratioAtMost(1.5), showsGrowth: false))
    }

    // Writes: replays insert with fresh keys; the copy they land in is deleted after the run.
    func compareWrite(_ figure: String, _ body: () throws -> Void) throws -> (Double, Double) {
      let statements = try SQLCapture.record(body)
      let replay = try RawReplay(statements, on: raw)
      sql += try describe(figure, statements, raw)
      return try measurePair(repeats: settings.repeats, batchSeconds: 0.05, body) {
        try replay.run()
      }
    }
    let commentText = "ベンチマークのコメントです。a comment of ordinary length, posted by forum-bench"
    let (comment, commentFloor) = try compareWrite("post a comment (`Board.addComment`)") {
      _ = try board.addComment(to: settings.commentThread, text: commentText)
    }
    table.lines.append(
      Line(
        figure: "post a comment (`Board.addComment`)", value: .perSecond(1 / comment),
        floorName: "same SQL via C API", floor: .perSecond(1 / commentFloor),
        target: .atLeast(.perSecond(1000))))
    let image = try ImagePreparer.prepare(
      Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/" + SeedCommand.imageFixtures[1])))
    let (thread, threadFloor) = try compareWrite("post a thread with an image") {
      _ = try board.createThread(
        title: "forum-bench thread", description: commentText, image: image)
    }
    table.lines.append(
      Line(
        figure: "post a thread with a \(image.data.count / 1024) KB JPEG (`createThread`)",
        value: .seconds(thread), floorName: "same SQL via C API", floor: .seconds(threadFloor)))

    if let versionPeak = peaks[0], let listPeak = peaks[1], let showPeaks = peaks[2],
      let lastPeak = peaks[3], let deepPeak = peaks[4]
    {
      let memoryTarget = Target.atMost(.bytes(50 * 1_048_576))
      table.lines += [
        Line(
          figure: "peak memory, `forum list`", value: .bytes(listPeak),
          floorName: "`forum --version`", floor: .bytes(versionPeak), target: memoryTarget),
        Line(
          figure: "peak memory, `forum show \(big.number)` (page 1 and last)",
          value: .bytes(max(showPeaks, lastPeak)), floorName: "`forum --version`",
          floor: .bytes(versionPeak), target: memoryTarget),
        Line(
          figure: "peak memory, `forum list --page \(deepPage)`", value: .bytes(deepPeak),
          floorName: "`forum --version`", floor: .bytes(versionPeak), target: memoryTarget),
      ]
    } else {
      table.title += " Peak memory not measured: it needs GNU time (/usr/bin/time)."
    }
    return BoardResult(label: label, table: table, sql: sql)
  }

  /// Checks that the board reads the seeded data as its own before timing anything.
  private func verify(_ board: Board, big: ForumThread, small: ForumThread, threadCount: Int)
    throws
  {
    let first = try board.threads(page: 1)
    guard first.items.count == min(Board.pageSize, threadCount),
      zip(first.items, first.items.dropFirst()).allSatisfy({ $0.lastActivity >= $1.lastActivity })
    else { throw BenchError("list page 1 of \(path) is not the newest threads first") }
    for thread in [big, small] where thread.commentCount > 0 {
      let opening = try board.comments(of: thread, page: 1)
      let last = try board.comments(
        of: thread, page: Board.lastPage(commentCount: thread.commentCount))
      guard opening.items.first?.number == 1, last.items.last?.number == thread.commentCount,
        opening.items.allSatisfy({ $0.authorName != "(deleted user)" })
      else { throw BenchError("thread #\(thread.number) of \(path) does not read back as seeded") }
    }
    for page in 1...min(5, Board.lastPage(commentCount: threadCount)) {
      if let thread = try board.threads(page: page).items.first(where: { $0.image != nil }) {
        guard try board.imageBytes(of: thread).count == thread.image!.byteCount else {
          throw BenchError("the image of thread #\(thread.number) does not read back")
        }
        break
      }
    }
  }

  /// The statements of one figure with their query plans.
  private func describe(_ figure: String, _ statements: [CapturedStatement], _ raw: RawDatabase)
    throws -> String
  {
    var text = "\n\(figure):\n"
    for (index, statement) in statements.enumerated() {
      text += "  \(index + 1). \(statement.sql.split(separator: "\n").joined(separator: " "))\n"
      for step in try raw.queryPlan(statement.sql) { text += "       plan: \(step)\n" }
    }
    return text
  }
}

/// 1234567 as "1,234,567".
func grouped(_ number: Int) -> String {
  let digits = String(number)
  var out = ""
  for (index, digit) in digits.enumerated() {
    if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
    out.append(digit)
  }
  return out
}
