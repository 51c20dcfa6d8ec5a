import CSQLite
import CSQLiteMemory

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// One SQLite connection. Statements are cached by SQL text and finalized with the connection.
public final class Connection {
  let handle: OpaquePointer
  public let path: String
  private var cache: [String: Statement] = [:]
  private var transactionDepth = 0
  /// How long a write waits for another process's lock (`BusyWait`).
  let busyTimeout: TimeInterval
  /// True inside `reading` or `transaction`.
  public var isInTransaction: Bool { transactionDepth > 0 }

  /// Opens (creating if needed, unless `create` is false) a database file in WAL mode, with a
  /// busy timeout and foreign keys. A write that meets another process's lock waits up to
  /// `busyTimeout` instead of failing.
  public init(path: String, busyTimeout: TimeInterval = 60, create: Bool = true) throws {
    _ = Connection.configured
    var handle: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
    let code = sqlite3_open_v2(path, &handle, flags, nil)
    guard code == SQLITE_OK, let handle else {
      let error = SQLiteError(code: code, connection: handle, sql: nil)
      sqlite3_close_v2(handle)
      throw error
    }
    self.handle = handle
    self.path = path
    self.busyTimeout = busyTimeout
    sqlite3_extended_result_codes(handle, 1)
    BusyWait.install(on: self)
    _ = forum_sqlite_register_regexp(handle)
  }

  /// Process-wide settings, made before the first connection initializes SQLite.
  private static let configured: Int32 = forum_sqlite_configure()

  deinit {
    // Statements still held keep a closed handle open: nothing of theirs may call back here.
    sqlite3_busy_handler(handle, nil, nil)
    sqlite3_progress_handler(handle, 0, nil, nil)
    sqlite3_wal_hook(handle, nil, nil)
    recent.removeAll()
    cache.removeAll()
    sqlite3_close_v2(handle)
  }

  /// Limits the statements run from now on (nil: none). SQLite calls a progress handler every
  /// `progressSteps` virtual machine steps; when the budget says stop, the statement fails with
  /// SQLITE_INTERRUPT (a write's transaction is rolled back) and `guarded` reports why.
  public var budget: StatementBudget? {
    didSet {
      guard budget !== oldValue else { return }
      if let budget {
        sqlite3_progress_handler(
          handle, Connection.progressSteps, progressHandler,
          Unmanaged.passUnretained(budget).toOpaque())
      } else {
        sqlite3_progress_handler(handle, 0, nil, nil)
      }
    }
  }

  /// Undoes a transaction or savepoint; never stopped by the budget (a stopped statement's
  /// transaction must end).
  private func rollBack(_ sql: String) {
    if budget != nil { sqlite3_progress_handler(handle, 0, nil, nil) }
    _ = try? execute(sql)
    if let budget {
      sqlite3_progress_handler(
        handle, Connection.progressSteps, progressHandler,
        Unmanaged.passUnretained(budget).toOpaque())
    }
  }

  /// Pages in the write-ahead log after the last commit SQLite reported to this connection's
  /// log hook (`checkpointsBetweenWrites`); 0 without the hook or after `checkpoint`.
  public private(set) var logPages: Int32 = 0
  /// Frames in the log after the last commit the hook saw, copied or not: what a restart
  /// (`restartLongLog`) would free. Unlike `logPages`, a checkpoint leaves it as it is.
  private var logFrames: Int32 = 0
  /// Past this many pages a commit checkpoints by itself (the hook's backstop).
  private var backstopPages: Int32 = 0

  /// Commits no longer copy the log into the database (SQLite's own checkpoint at commit, once
  /// the log passes 1,000 pages, writes pages and calls `fdatasync` twice: the slowest commits
  /// by far): they only note the log's length in `logPages`, and whoever writes runs
  /// `checkpoint` between writes. A writer that never does is held by `backstop`: past it a
  /// commit checkpoints as SQLite would.
  public func checkpointsBetweenWrites(backstop: Int32) {
    backstopPages = backstop
    sqlite3_wal_hook(
      handle,
      { context, handle, name, pages in
        let connection = Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue()
        connection.logPages = pages
        connection.logFrames = pages
        if pages >= connection.backstopPages {
          sqlite3_wal_checkpoint_v2(handle, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
          connection.logPages = 0
        }
        return SQLITE_OK
      }, Unmanaged.passUnretained(self).toOpaque())
  }

  /// A passive checkpoint (it waits for no reader and no reader waits for it): what the log
  /// holds that no reader still needs is copied into the database. When the log has grown past
  /// `LogRestarts.restartPages`, the log is then started again from its beginning (`restartLog`).
  public func checkpoint() throws {
    logPages = 0
    var frames: Int32 = 0
    let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, nil)
    // Busy: another connection is checkpointing, which is as good.
    if code & 0xff == SQLITE_BUSY { return }
    guard code == SQLITE_OK else {
      throw SQLiteError(code: code, connection: handle, sql: "PRAGMA wal_checkpoint(PASSIVE)")
    }
    if frames < LogRestarts.restartPages {
      restarts.noteShort()
    } else if restarts.due(frames) {
      restartAttempts += 1
      let outcome = restartLog(waiting: restarts.wait)
      restarts.note(outcome, frames: frames)
      if outcome == .restarted { logFrames = 0 }
    }
  }

  /// A writer whose checkpoints run elsewhere (a server's, a script's), between two of its
  /// transactions: once its commits have left the log `LogRestarts.restartPages` long (or longer,
  /// past restarts that found a reader), it starts the log again itself (`restartLog`). A
  /// checkpointer's restart needs the write lock, which a writer going from one transaction to
  /// the next leaves free for microseconds: it failed and the log grew past twice its length
  /// (BENCHMARKS N30).
  public func restartLongLog() {
    if logFrames < LogRestarts.restartPages { writerRestarts.noteShort() }
    guard writerRestarts.due(logFrames), !isInTransaction else { return }
    restartAttempts += 1
    let outcome = restartLog(waiting: writerRestarts.wait)
    writerRestarts.note(outcome, frames: logFrames)
    if outcome == .restarted { (logPages, logFrames) = (0, 0) }
  }

  /// When `checkpoint` and `restartLongLog` try their next restarts, and how long they wait.
  private var restarts = LogRestarts(triesLonger: false)
  private var writerRestarts = LogRestarts(triesLonger: true)
  /// Restarts tried so far (tests).
  private(set) var restartAttempts = 0
  /// The naps the running restart may still take (`restartLog`).
  private var restartNaps: Int32 = 0

  /// SQLite writes the log from its beginning again only when a writer finds it wholly copied
  /// and no reader in it. A server always has a reader somewhere in the log, so passive
  /// checkpoints never reach its end and every commit was appended to a file that grew without
  /// bound (580 MB in 12 s of POSTs), each frame a new block for the file system to allocate
  /// and zero. A restart checkpoint holds writers while it copies the rest of the log (the
  /// commits since the last checkpoint) and waits for the readers still in it, then lets the
  /// next writer start the log again. Waited for `milliseconds` at most, in 1 ms naps (writers
  /// nap as briefly, `BusyWait`), and no longer once Ctrl-C is pressed or the server stops.
  private func restartLog(waiting milliseconds: Int32) -> LogRestarts.Outcome {
    restartNaps = milliseconds
    sqlite3_busy_handler(
      handle,
      { context, _ in
        let connection = Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue()
        guard connection.restartNaps > 0, !BusyWait.stopped(connection) else { return 0 }
        connection.restartNaps -= 1
        sqlite3_sleep(1)
        return 1
      }, Unmanaged.passUnretained(self).toOpaque())
    defer { BusyWait.install(on: self) }
    var (frames, copied): (Int32, Int32) = (-1, -1)
    let code = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_RESTART, &frames, &copied)
    if code == SQLITE_OK { return .restarted }
    // SQLite tells the log's length once it holds the checkpoint's lock.
    return frames < 0 ? .checkpointRunning : .readersStayed(atTheEnd: copied >= frames)
  }

  /// Steps between two looks at the budget: a few tens of microseconds of work.
  static let progressSteps: Int32 = 1000

  /// How many statements are cached (tests check the bound).
  var cachedStatementCount: Int { cache.count }

  /// True when SQLite opened the file read-only (the file or its directory is write-protected).
  public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

  /// Runs one or more statements that take no parameters.
  public func execute(_ sql: String) throws {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle, sql: sql) }
  }

  /// Statements kept prepared. A server renders each shape of an app's `where` as its own SQL,
  /// so the cache is bounded: past this it starts again (statements in use live on until their
  /// callers let go of them).
  static let maximumCachedStatements = 512

  /// A cached prepared statement for `sql`.
  public func prepare(_ sql: String) throws -> Statement {
    // Equal strings of one storage compare at once; others of the same length, byte by byte.
    let length = sql.utf8.count
    for entry in recent where entry.sql.utf8.count == length && entry.sql == sql {
      return entry.statement
    }
    let statement: Statement
    if let cached = cache[sql] {
      statement = cached
    } else {
      if cache.count >= Connection.maximumCachedStatements {
        cache.removeAll(keepingCapacity: true)
      }
      statement = try Statement(connection: self, sql: sql)
      cache[sql] = statement
    }
    if recent.count < Connection.recentStatements {
      recent.append((sql, statement))
    } else {
      recent[nextRecent] = (sql, statement)
      nextRecent = (nextRecent + 1) % Connection.recentStatements
    }
    return statement
  }

  /// The statements asked for last, looked at before the cache: the text of a statement its
  /// caller keeps (a kept template's, a constant) is found without hashing it (a piped
  /// comment's statements hashed some 15,000 instructions of text a comment).
  private var recent: [(sql: String, statement: Statement)] = []
  private var nextRecent = 0
  static let recentStatements = 16

  /// Runs `sql` with `values` for its effect.
  public func run(_ sql: String, _ values: [SQLValue] = []) throws {
    try prepare(sql).run(values)
  }

  /// The rowid of the last row an INSERT wrote (not one its triggers wrote).
  public var lastInsertRowid: Int64 { sqlite3_last_insert_rowid(handle) }

  /// Number of rows changed by the last INSERT, UPDATE or DELETE.
  public var changes: Int { Int(sqlite3_changes64(handle)) }

  /// Rows this connection has inserted, changed or deleted since it opened, triggers' included
  /// (and those of transactions it rolled back).
  public var totalChanges: Int64 { sqlite3_total_changes64(handle) }

  /// Runs `body`, which only reads, in one read transaction: one snapshot for all its statements,
  /// and SQLite's shared lock taken once instead of at each of them (a lock is four `fcntl`
  /// calls). Inside a transaction it just runs.
  public func reading<T>(_ body: () throws -> T) throws -> T {
    guard transactionDepth == 0 else { return try body() }
    try prepare("BEGIN").run()
    transactionDepth += 1
    defer { transactionDepth -= 1 }
    do {
      let result = try body()
      try prepare("COMMIT").run()
      return result
    } catch {
      rollBack("ROLLBACK")
      throw error
    }
  }

  /// True while a transaction is open on the connection as SQLite sees it (it rolls the whole
  /// transaction back by itself after some failures: a full disk, an I/O error).
  var sqliteIsInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// Group commit: `count` independent writes in one `BEGIN IMMEDIATE` transaction, each in its
  /// own savepoint, committed once. A write that throws undoes itself alone and its error is
  /// returned at its index (nil: written). Throws when the transaction cannot begin or commit:
  /// then nothing of any write is in the database. A failure after which SQLite dropped the
  /// whole transaction runs the writes that had succeeded again in a new one.
  public func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    precondition(transactionDepth == 0, "a group of writes is a transaction of its own")
    var errors = [Error?](repeating: nil, count: count)
    var pending = Array(0..<count)
    while true {
      try prepare("BEGIN IMMEDIATE").run()
      do { try ensureFileInPlace() } catch {
        rollBack("ROLLBACK")
        throw error
      }
      transactionDepth += 1
      var lost: Int?
      for (position, index) in pending.enumerated() {
        do {
          try transaction { try write(index) }  // nested: a savepoint
          errors[index] = nil
        } catch {
          errors[index] = error
          if !sqliteIsInTransaction {
            lost = position
            break
          }
        }
      }
      transactionDepth -= 1
      if let lost {
        // Everything before was rolled back with it: again, without the write that failed.
        pending = pending[..<lost].filter { errors[$0] == nil } + pending[(lost + 1)...]
        continue
      }
      do {
        try prepare("COMMIT").run()
      } catch {
        rollBack("ROLLBACK")
        throw error
      }
      return errors
    }
  }

  /// Runs `body` in a `BEGIN IMMEDIATE` transaction that commits on return and rolls back on throw.
  /// Nested calls join the outer transaction through a savepoint.
  public func transaction<T>(_ body: () throws -> T) throws -> T {
    let nested = transactionDepth > 0
    // Prepared once and kept, as every statement: a write is a few of these.
    try prepare(nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE").run()
    if !nested {
      do { try ensureFileInPlace() } catch {
        rollBack("ROLLBACK")
        throw error
      }
    }
    transactionDepth += 1
    defer { transactionDepth -= 1 }
    do {
      let result = try body()
      try prepare(nested ? "RELEASE nested" : "COMMIT").run()
      return result
    } catch {
      if nested {
        rollBack("ROLLBACK TO nested; RELEASE nested")
      } else {
        rollBack("ROLLBACK")
      }
      throw error
    }
  }
}

/// Non-zero stops the statement (SQLITE_INTERRUPT). The context is the connection's budget,
/// kept alive by the connection while installed.
private func progressHandler(_ context: UnsafeMutableRawPointer?) -> Int32 {
  guard let context else { return 0 }
  return Unmanaged<StatementBudget>.fromOpaque(context).takeUnretainedValue().check() == nil
    ? 0 : 1
}
