import CLibPQ
import Datastore
import Forum
import Foundation

/// `forum-bench pg --owner URI --member URI --threads N [--big-thread C] [--repeats R]`: the
/// PostgreSQL engine on a board of N threads. The owner (who ran or may run `forum init`) seeds
/// the board with SQL when it is empty, through the engine's own triggers; the member measures
/// the board's reads beside the same SQL sent through libpq, as the member (row-level security
/// on) and as the owner (the owner's policy lets every row through).
enum PostgresBenchmark {
  struct Settings {
    var owner: String
    var member: String
    var threads: Int
    var bigThread: Int
    var repeats: Int
  }

  static func main(_ arguments: [String]) -> Int32 {
    do {
      let options = try Options(
        arguments, known: ["owner", "member", "threads", "big-thread", "repeats"])
      guard let owner = options.string("owner"), let member = options.string("member"),
        let threads = try options.int("threads"), threads >= 3
      else { throw UsageError("pg needs --owner URI --member URI --threads N (N >= 3)") }
      let settings = Settings(
        owner: owner, member: member, threads: threads,
        bigThread: try options.int("big-thread", fallback: 1000)!,
        repeats: max(3, try options.int("repeats", fallback: 15)!))
      print(try run(settings))
      return 0
    } catch {
      return reportFailure("pg", error)
    }
  }

  /// A raw libpq connection: the floor the engine is compared with.
  final class Raw {
    let handle: OpaquePointer
    private var prepared: Set<String> = []

    init(_ uri: String) throws {
      guard let handle = PQconnectdb(uri), PQstatus(handle) == CONNECTION_OK else {
        throw BenchError("cannot connect to \(uri)")
      }
      self.handle = handle
    }

    deinit { PQfinish(handle) }

    /// Runs `sql` (prepared once) with text parameters; returns the rows' first column.
    @discardableResult
    func query(_ sql: String, _ values: [String] = []) throws -> [String] {
      let name = "s\(abs(sql.hashValue))"
      if !prepared.contains(name) {
        let result = PQprepare(handle, name, sql, Int32(values.count), nil)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
          throw BenchError("prepare failed: \(String(cString: PQerrorMessage(handle))) in \(sql)")
        }
        prepared.insert(name)
      }
      let copies = values.map { strdup($0) }
      defer { for copy in copies { free(copy) } }
      let pointers = copies.map { UnsafePointer($0) }
      let result = pointers.withUnsafeBufferPointer {
        PQexecPrepared(handle, name, Int32(values.count), $0.baseAddress, nil, nil, 0)
      }
      defer { PQclear(result) }
      let status = PQresultStatus(result)
      guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
        throw BenchError("query failed: \(String(cString: PQerrorMessage(handle))) in \(sql)")
      }
      return (0..<PQntuples(result)).map { row in
        // Read every column, as the engine does.
        var first = ""
        for column in 0..<PQnfields(result) {
          let text = String(cString: PQgetvalue(result, row, column))
          if column == 0 { first = text }
        }
        return first
      }
    }

    func execute(_ sql: String) throws {
      let result = PQexec(handle, sql)
      defer { PQclear(result) }
      let status = PQresultStatus(result)
      guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
        throw BenchError("\(String(cString: PQerrorMessage(handle))) in \(sql)")
      }
    }
  }

  /// Threads (and comments on #1 and #2) made with SQL as the owner, through the triggers.
  static func seed(_ settings: Settings, owner: Raw, memberId: String) throws -> Double {
    let count = try owner.query("SELECT count(*) FROM forum.objects WHERE class = 'Thread'")
    guard count.first == "0" else { return 0 }
    let start = monotonicSeconds()
    let pointer =
      "jsonb_build_object('__type', 'Pointer', 'className', 'user', 'objectId', '\(memberId)')"
    try owner.execute(
      """
      BEGIN;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Thread', substr(md5(i::text || 'thread'), 1, 16), ARRAY['*', '\(memberId)'],
        ARRAY['\(memberId)'], jsonb_build_object('title', 'Thread ' || i,
          'description', repeat('words of a thread ', 8), 'user', \(pointer))
      FROM generate_series(1, \(settings.threads)) AS i;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Comment', substr(md5(t.n::text || '-' || i::text || 'comment'), 1, 16),
        ARRAY['*', '\(memberId)'], ARRAY['\(memberId)'],
        jsonb_build_object('text', 'comment ' || i, 'user', \(pointer),
          'thread', jsonb_build_object('__type', 'Pointer', 'className', 'Thread',
                                       'objectId', t.object_id))
      FROM (SELECT object_id, (data->>'number')::int AS n FROM forum.objects
            WHERE class = 'Thread' AND (data->>'number')::int IN (1, 2)) AS t,
           generate_series(1, \(settings.bigThread)) AS i
      WHERE t.n = 1 OR i <= 10;
      COMMIT;
      ANALYZE forum.objects;
      """)
    return monotonicSeconds() - start
  }

  static func run(_ settings: Settings) throws -> String {
    let directory = try makeTemporaryDirectory("forum-pg-bench")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let profiles = ProfileStore(directory: directory + "/profiles")
    try Board.initialize(location: settings.owner)
    let board = try Board(location: settings.member, profile: "member", profiles: profiles)
    let owner = try Raw(settings.owner)
    let member = try Raw(settings.member)
    let seconds = try seed(settings, owner: owner, memberId: board.myId)
    let principals = "{\"*\",\"\(board.myId)\"}"

    // The statements the engine sends for a page of the list and for a thread's first page.
    let columns =
      "o.class, o.object_id, o.create_date, o.update_date, o.readers::text, o.writers::text, "
      + "o.data::text"
    let listSQL = """
      SELECT \(columns) FROM forum.objects o WHERE o.class = 'Thread' AND ('*' = ANY(o.readers) OR o.readers && $1::text[])
      ORDER BY (o.data->'lastActivity') DESC, o.id DESC LIMIT $2 OFFSET $3
      """
    let includeSQL =
      "SELECT \(columns) FROM forum.objects o WHERE o.object_id = ANY($1::text[]) "
      + "AND ('*' = ANY(o.readers) OR o.readers && $2::text[])"
    let threadSQL = """
      SELECT \(columns) FROM forum.objects o WHERE o.class = 'Thread' AND o.key_number = ($1::jsonb #>> '{}')
      AND ('*' = ANY(o.readers) OR o.readers && $2::text[]) ORDER BY o.id LIMIT $3 OFFSET $4
      """
    let commentsSQL = """
      SELECT \(columns) FROM forum.objects o WHERE o.class = 'Comment'
      AND o.key_thread = ($1::jsonb #>> '{}') AND ('*' = ANY(o.readers) OR o.readers && $2::text[])
      ORDER BY (o.data->'number'), o.id LIMIT $3 OFFSET $4
      """
    let users = "{\"\(board.myId)\"}"
    let big = try board.thread(1)
    let bigPointer = JSONValue.pointer(className: "Thread", objectId: big.objectId).jsonText()
    func rawList(_ raw: Raw) throws {
      try raw.query(listSQL, [principals, "21", "0"])
      try raw.query(includeSQL, [users, principals])
    }
    func rawShow(_ raw: Raw) throws {
      try raw.query(threadSQL, ["1", principals, "1", "0"])
      try raw.query(includeSQL, [users, principals])
      try raw.query(commentsSQL, [bigPointer, principals, "21", "0"])
      try raw.query(includeSQL, [users, principals])
    }
    let repeats = settings.repeats
    let (list, rawListMember) = try measurePair(repeats: repeats) {
      _ = try board.threads(page: 1)
    } _: {
      try rawList(member)
    }
    let (show, rawShowMember) = try measurePair(repeats: repeats) {
      _ = try board.comments(of: try board.thread(1), page: 1)
    } _: {
      try rawShow(member)
    }
    let (rlsList, ownerList) = try measurePair(repeats: repeats) {
      try rawList(member)
    } _: {
      try rawList(owner)
    }
    let (rlsShow, ownerShow) = try measurePair(repeats: repeats) {
      try rawShow(member)
    } _: {
      try rawShow(owner)
    }
    func ms(_ value: Double) -> String { String(format: "%.3f ms", value * 1000) }
    func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
    var lines = [
      "#### \(grouped(settings.threads)) threads (#1 has \(big.commentCount) comments)"
        + (seconds > 0 ? String(format: ", seeded in %.1f s", seconds) : ""),
      "",
      "| figure | value | floor | ratio |",
      "|---|---|---|---|",
      "| list page 1 (`Board.threads`, member) | \(ms(list)) | same SQL via libpq, member: "
        + "\(ms(rawListMember)) | \(ratio(list, rawListMember)) |",
      "| show #1 page 1 (`thread` + `comments`, member) | \(ms(show)) | same SQL via libpq, "
        + "member: \(ms(rawShowMember)) | \(ratio(show, rawShowMember)) |",
      "| list SQL as a member (RLS) | \(ms(rlsList)) | as the owner: \(ms(ownerList)) | "
        + "\(ratio(rlsList, ownerList)) |",
      "| show SQL as a member (RLS) | \(ms(rlsShow)) | as the owner: \(ms(ownerShow)) | "
        + "\(ratio(rlsShow, ownerShow)) |",
    ]
    lines.append("")
    lines.append("Medians of \(repeats) rounds.")
    return lines.joined(separator: "\n")
  }
}
