import CSQLite
import Datastore
import Foundation

/// One thread as the seed generates it, before it is written either way.
struct SeedThread {
  var author: Int
  var title: String
  var description: String
  var image: (name: String, bytes: [UInt8], mimeType: String, summary: JSONValue)?
  var comments: [(author: Int, text: String)]
}

/// `forum-bench seed`'s bulk path (issue 20): the same board as posting every thread and comment
/// through `Datastore.create`, written as rows. What posting one by one costs is the per-row
/// work of the API (validation, JSON, the statement's round trip) and, for every comment, the
/// rules' trigger that counts its thread up, which rewrites the thread's row and re-reads its
/// JSON in every trigger watching an update of it. Here each thread is written once with its
/// final counters (it and its comments are generated before they are written), the comments
/// with their numbers, in the order and with the row ids posting would give them, while every
/// other trigger of the board runs as it would: the change feed and its window, the full-text
/// index, the public counts, the thread sequence, the shape limit. Only the counting trigger is
/// lifted for the load, and put back byte for byte; then the invariants it keeps are checked
/// over the whole board (`checkInvariants`), and the seed fails if any does not hold.
///
/// The load runs without a rollback journal and without syncs (a seed that fails leaves a file to
/// delete, and says so), and the full-text index is merged once at the end instead of at every
/// flush.
final class BulkSeed {
  let database: RawDatabase
  private let insertThread: RawStatement
  private let insertComment: RawStatement
  private let moveBatch: RawStatement
  private let insertFile: RawStatement
  private var nextId: Int64
  private var clock: Int64
  private let counting: (name: String, sql: String)
  private let searchIndexed: Bool
  private let threadClass = SeedCommand.threadClass
  private let commentClass = SeedCommand.commentClass
  private var threadNumber: Int64 = 0

  /// The trigger that counts a comment's thread up (`SQLiteRules`' insert trigger of the child
  /// class); lifted during the load.
  static let countingTrigger = "rule_insert_Comment"

  init(path: String, posts: Int, cacheMegabytes: Int) throws {
    database = try RawDatabase(path: path)
    try database.execute(
      """
      PRAGMA journal_mode = DELETE; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
      PRAGMA cache_size = -\(cacheMegabytes * 1024); PRAGMA temp_store = MEMORY
      """)
    let found = try database.rows(
      "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name = '\(BulkSeed.countingTrigger)'"
    )
    guard let trigger = found.first, trigger.count == 2 else {
      throw BenchError("the board has no trigger \(BulkSeed.countingTrigger) to lift for the load")
    }
    counting = (trigger[0], trigger[1])
    searchIndexed =
      try database.rows(
        """
        SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND name = 'search_insert'
          AND instr(sql, '''\(commentClass)''') > 0
        """
      ).isEmpty == false
    nextId = Int64(try database.rows("SELECT coalesce(max(id), 0) FROM objects")[0][0])! + 1
    // Dated as if posted one a millisecond, ending now.
    clock = Int64(Date().timeIntervalSince1970 * 1000) - Int64(posts)
    // The fields the rules add, in the order the engine's INSERT writes them
    // (`SQLiteRules.newRow`; the counting trigger's `json_set` replaces them in place); a
    // thread's counters in their own column (`SQLiteRules.counterColumn`).
    let columns = "id, class, objectId, createDate, updateDate, readers, writers, data, counts"
    // A batch's rows wait in a temporary table and go into `objects` by one statement: each
    // statement on a table with triggers is a savepoint, at which FTS5 writes out what it has
    // pending (a segment, then merges), so row by row it would write a segment per post.
    try database.execute("CREATE TEMP TABLE seed_rows AS SELECT \(columns) FROM objects LIMIT 0")
    moveBatch = try RawStatement(
      database, "INSERT INTO objects(\(columns)) SELECT \(columns) FROM seed_rows ORDER BY id")
    insertThread = try RawStatement(
      database,
      """
      INSERT INTO seed_rows(\(columns)) VALUES (?1, '\(threadClass)', ?2, ?3, ?3, ' *' || ?4, ?4,
        json_set(?5, '$.number', ?6),
        json_object('commentCount', ?7, 'lastCommentNumber', ?7, 'lastActivity', ?8))
      """)
    insertComment = try RawStatement(
      database,
      """
      INSERT INTO seed_rows(\(columns)) VALUES (?1, '\(commentClass)', ?2, ?3, ?3, ?8, ?4,
        json_set(?5, '$.number', ?6, '$.thread',
          json_object('__type', 'Pointer', 'className', '\(threadClass)', 'objectId', ?7)), NULL)
      """)
    insertFile = try RawStatement(
      database,
      """
      INSERT INTO files(name, mimeType, fileSize, createDate, updateDate, readers, writers, data)
      VALUES (?1, ?2, ?3, ?4, ?4, ' *' || ?5, ?5, ?6)
      """)
    try database.execute("BEGIN")
    try database.execute("DROP TRIGGER \"\(counting.name)\"")
    if searchIndexed {
      // One merge at the end instead of FTS5's merges at every flush of its pending terms; the
      // settings schema 21 gives every board are put back after it.
      try database.execute(
        """
        INSERT INTO search_text(search_text, rank) VALUES ('automerge', 0);
        INSERT INTO search_text(search_text, rank) VALUES ('crisismerge', 64)
        """)
    }
  }

  /// Ends a batch's transaction and starts the next.
  func commitBatch() throws {
    try step(moveBatch, [])
    try database.execute("DELETE FROM seed_rows; COMMIT; BEGIN")
  }

  /// Writes a thread and its comments as `Board.createThread` and `Board.addComment` leave them
  /// once all are posted.
  func write(_ thread: SeedThread, authors: [String]) throws {
    threadNumber += 1
    let owner = authors[thread.author]
    let created = tick()
    let lastActivity = clock + Int64(thread.comments.count)
    var fields: [String: JSONValue] = [
      "title": .string(thread.title), "description": .string(thread.description),
      "user": .pointer(className: "user", objectId: owner),
    ]
    if let image = thread.image {
      try step(
        insertFile,
        [
          .text(image.name), .text(image.mimeType), .integer(Int64(image.bytes.count)),
          .integer(created), .text(" \(owner) "), .blob(image.bytes),
        ])
      fields["fileName"] = .string(image.name)
      fields["image"] = image.summary
    }
    let count = Int64(thread.comments.count)
    let threadId = objectId()
    try step(
      insertThread,
      [
        .integer(nextId), .text(threadId), .integer(created), .text(" \(owner) "),
        .text(JSONValue.object(fields).jsonText()), .integer(threadNumber), .integer(count),
        .integer(count == 0 ? created : lastActivity),
      ])
    nextId += 1
    let pointer = JSONValue.pointer(className: threadClass, objectId: threadId)
    for (index, comment) in thread.comments.enumerated() {
      let writer = authors[comment.author]
      let fields: [String: JSONValue] = [
        "text": .string(comment.text), "thread": pointer,
        "user": .pointer(className: "user", objectId: writer),
      ]
      try step(
        insertComment,
        [
          .integer(nextId), .text(objectId()), .integer(tick()), .text(" \(writer) "),
          .text(JSONValue.object(fields).jsonText()), .integer(Int64(index + 1)),
          .text(threadId), .text(" * \(owner) "),
        ])
      nextId += 1
    }
  }

  /// Puts the counting trigger back, merges the full-text index, checks the board and commits.
  func finish() throws {
    let start = Date()
    func done(_ step: String) {
      let seconds = String(format: "%.1f", Date().timeIntervalSince(start))
      FileHandle.standardError.write(Data("seed: \(step), \(seconds) s into finishing\n".utf8))
    }
    try step(moveBatch, [])
    try database.execute("DELETE FROM seed_rows")
    try database.execute(counting.sql)
    if searchIndexed {
      // The rows the triggers left queued (schema 23: `search_pending`, at most 1,000) go into
      // the index before it is merged, with the text `SQLiteSearch.indexed` gives them.
      try database.execute(
        """
        INSERT INTO search_text(rowid, body)
          SELECT o.id, CASE o.class
            WHEN '\(threadClass)' THEN (coalesce(json_extract(o.data, '$.title'), '') || char(10)
              || coalesce(json_extract(o.data, '$.description'), '')) || char(10, 10)
            ELSE (coalesce(json_extract(o.data, '$.text'), '')) || char(10, 10) END
          FROM search_pending p JOIN objects o ON o.id = p.id ORDER BY p.id;
        DELETE FROM search_pending;
        INSERT INTO search_text(search_text) VALUES ('optimize');
        INSERT INTO search_text(search_text, rank) VALUES ('automerge', 0);
        INSERT INTO search_text(search_text, rank) VALUES ('usermerge', 16);
        INSERT INTO search_text(search_text, rank) VALUES ('crisismerge', 64);
        """)
      done("search index merged")
    }
    try checkInvariants()
    done("board checked")
    try database.execute("COMMIT")
    try database.execute("PRAGMA journal_mode = WAL")
    done("committed")
  }

  /// What the lifted trigger and the engine's INSERT keep, checked over every thread: comments
  /// numbered 1…n without a gap, the thread's count, last number and last activity, its readers
  /// on its comments, every comment's thread there; the sequence at the last thread's number;
  /// one index row per post. Throws with the first broken one.
  func checkInvariants() throws {
    let thread = "'\(threadClass)'"
    let comment = "'\(commentClass)'"
    let checks: [(String, String)] = [
      (
        // Grouped in the order of the comments' (thread, number) index, each group's thread
        // found by its objectId: joining threads to the groups instead made SQLite scan the
        // materialized groups once per thread (100,000 × 100,000 on the million-post board).
        "a thread's counters disagree with its comments",
        """
        SELECT count(*) FROM (
          SELECT json_extract(data, '$.thread') AS pointer, count(*) AS n,
            max(json_extract(data, '$.number')) AS last, max(createDate) AS active,
            count(DISTINCT json_extract(data, '$.number')) AS distinctNumbers,
            min(json_extract(data, '$.number')) AS first
          FROM objects WHERE class = \(comment) GROUP BY 1) c
        LEFT JOIN objects t
          ON t.objectId = json_extract(c.pointer, '$.objectId') AND t.class = \(thread)
        WHERE t.id IS NULL
          OR json_extract(t.counts, '$.commentCount') IS NOT c.n
          OR json_extract(t.counts, '$.lastCommentNumber') IS NOT c.last
          OR json_extract(t.counts, '$.lastActivity') IS NOT c.active
          OR c.distinctNumbers IS NOT c.n OR c.first IS NOT 1
        """
      ),
      (
        // With the check above, every thread with comments is one of the groups: the others
        // must say they have none.
        "a thread without comments has counters",
        """
        SELECT (SELECT count(*) FROM objects WHERE class = \(thread)
            AND json_extract(counts, '$.commentCount') IS NOT 0)
          - (SELECT count(DISTINCT json_extract(data, '$.thread')) FROM objects
            WHERE class = \(comment))
          + (SELECT count(*) FROM objects WHERE class = \(thread)
            AND json_extract(counts, '$.commentCount') IS 0
            AND (json_extract(counts, '$.lastCommentNumber') IS NOT 0
              OR json_extract(counts, '$.lastActivity') IS NOT createDate))
        """
      ),
      (
        "a comment's thread is missing, or its readers are not its thread's",
        """
        SELECT count(*) FROM objects c LEFT JOIN objects t
          ON t.class = \(thread) AND t.objectId = json_extract(c.data, '$.thread.objectId')
        WHERE c.class = \(comment) AND (t.id IS NULL OR t.readers IS NOT c.readers
          OR t.id > c.id)
        """
      ),
      (
        "thread numbers are not 1…n or the sequence is not at n",
        """
        SELECT count(*) FROM (SELECT count(*) AS n,
            count(DISTINCT json_extract(data, '$.number')) AS d,
            min(json_extract(data, '$.number')) AS lo, max(json_extract(data, '$.number')) AS hi
          FROM objects WHERE class = \(thread))
        WHERE d <> n OR (n > 0 AND (lo <> 1 OR hi <> n))
          OR hi IS NOT (SELECT value FROM counters WHERE name = 'threadNumber')
        """
      ),
      (
        "the public counts are not the rows'",
        """
        SELECT count(*) FROM (SELECT class, count(*) AS n FROM objects
          WHERE instr(readers, ' * ') > 0 GROUP BY class) o
        LEFT JOIN class_counts k ON k.class = o.class WHERE k.public IS NOT o.n
        """
      ),
    ]
    var all = checks
    if searchIndexed {
      all.append(
        (
          "the full-text index does not hold one row per post",
          """
          SELECT (SELECT count(*) FROM search_text_docsize)
            - (SELECT count(*) FROM objects WHERE class IN (\(thread), \(comment), 'Message'))
          """
        ))
    }
    for (failure, sql) in all {
      let found = try database.rows(sql)
      guard found.first?.first == "0" else {
        throw BenchError("bulk seed: \(failure) (\(found.first?.first ?? "?") rows)")
      }
    }
  }

  private func tick() -> Int64 {
    clock += 1
    return clock
  }

  /// A new object id as the engines make them: drawn eight bytes at a time (a `getrandom` call a
  /// letter, as this tool once drew them, spent a fifth of the million-post seed in the kernel).
  private func objectId() -> String { DataObject.newObjectId() }

  private func step(_ statement: RawStatement, _ values: [BoundValue]) throws {
    let handle = statement.handle
    sqlite3_reset(handle)
    for (offset, value) in values.enumerated() {
      statement.bind(value, at: Int32(offset + 1))
    }
    let code = sqlite3_step(handle)
    sqlite3_reset(handle)
    guard code == SQLITE_DONE else {
      throw BenchError(
        "bulk seed: \(String(cString: sqlite3_errmsg(database.handle))) "
          + "(the file is half-written: delete it)")
    }
  }
}
