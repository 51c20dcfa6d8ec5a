import CSQLite
import Foundation

// SQLITE_TRANSIENT: SQLite copies bound text before the call returns, as the Datastore asks.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The floor of a board operation: the statements it ran, replayed through the SQLite C API on a
/// connection set up like the Datastore's (WAL, synchronous NORMAL), prepared once, every column
/// of every row read as text, integer or blob, and nothing else.
final class RawDatabase {
  let handle: OpaquePointer

  init(path: String) throws {
    SQLCapture.hookNewConnections = false
    defer { SQLCapture.hookNewConnections = true }
    var handle: OpaquePointer?
    let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
    guard code == SQLITE_OK, let handle else {
      sqlite3_close_v2(handle)
      throw BenchError("cannot open \(path) through the C API (\(code))")
    }
    self.handle = handle
    sqlite3_busy_timeout(handle, 60_000)
    try execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL")
  }

  deinit { sqlite3_close_v2(handle) }

  func execute(_ sql: String) throws {
    guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
      throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
    }
  }

  /// Every row of `sql` (no parameters), each column as text ("" for NULL).
  func rows(_ sql: String) throws -> [[String]] {
    let statement = try RawStatement(self, sql)
    var rows: [[String]] = []
    var code = sqlite3_step(statement.handle)
    while code == SQLITE_ROW {
      rows.append(
        (0..<sqlite3_column_count(statement.handle)).map { column in
          sqlite3_column_text(statement.handle, column).map { String(cString: $0) } ?? ""
        })
      code = sqlite3_step(statement.handle)
    }
    guard code == SQLITE_DONE else {
      throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
    }
    return rows
  }

  /// One query plan line per step of `sql` (`EXPLAIN QUERY PLAN`), parameters left unbound.
  func queryPlan(_ sql: String) throws -> [String] {
    let plan = try RawStatement(self, "EXPLAIN QUERY PLAN " + sql)
    var lines: [String] = []
    while sqlite3_step(plan.handle) == SQLITE_ROW {
      lines.append(String(cString: sqlite3_column_text(plan.handle, 3)))
    }
    return lines
  }
}

final class RawStatement {
  let handle: OpaquePointer

  init(_ database: RawDatabase, _ sql: String) throws {
    var handle: OpaquePointer?
    guard sqlite3_prepare_v2(database.handle, sql, -1, &handle, nil) == SQLITE_OK, let handle
    else {
      throw BenchError("cannot prepare \(sql): \(String(cString: sqlite3_errmsg(database.handle)))")
    }
    self.handle = handle
  }

  deinit { sqlite3_finalize(handle) }

  /// Binds `value` to the parameter at `index` (1-based); text and blobs are copied.
  func bind(_ value: BoundValue, at index: Int32) {
    switch value {
    case .null: sqlite3_bind_null(handle, index)
    case .integer(let int): sqlite3_bind_int64(handle, index, int)
    case .real(let double): sqlite3_bind_double(handle, index, double)
    case .text(let text): sqlite3_bind_text(handle, index, text, -1, transient)
    case .blob(let bytes):
      _ = bytes.withUnsafeBytes {
        sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), transient)
      }
    }
  }
}

/// A recorded operation ready to replay.
final class RawReplay {
  private struct Step {
    let statement: RawStatement
    let values: [BoundValue]
    /// The parameter that must change on every replay: the unique key of the row it inserts.
    let freshKey: Int?
  }

  private let database: RawDatabase
  private let steps: [Step]
  /// Counts replays across instances, so fresh keys never repeat within a process.
  private nonisolated(unsafe) static var serial = 0
  private static let processTag = "x\(getpid())"

  /// Inserts replay with a fresh `objectId` or file name (their unique keys) each time; every
  /// other value is bound exactly as captured.
  init(_ statements: [CapturedStatement], on database: RawDatabase) throws {
    self.database = database
    steps = try statements.map { captured in
      let freshKey =
        captured.sql.hasPrefix("INSERT INTO objects")
        ? 1 : captured.sql.hasPrefix("INSERT INTO files") ? 0 : nil
      return Step(
        statement: try RawStatement(database, captured.sql), values: captured.values,
        freshKey: freshKey)
    }
  }

  /// Runs every statement once; returns a checksum of what was read so nothing is skipped.
  @discardableResult
  func run() throws -> Int {
    var checksum = 0
    RawReplay.serial += 1
    for step in steps {
      let handle = step.statement.handle
      for (offset, value) in step.values.enumerated() {
        let index = Int32(offset + 1)
        var value = value
        if offset == step.freshKey, case .text(let old) = value {
          // Same length as the original, so the row is the same size.
          let tag = "R\(RawReplay.serial)\(RawReplay.processTag)"
          let key = tag + old.dropFirst(tag.count)
          value = .text(key)
        }
        step.statement.bind(value, at: index)
      }
      var code = sqlite3_step(handle)
      while code == SQLITE_ROW {
        for column in 0..<sqlite3_column_count(handle) {
          switch sqlite3_column_type(handle, column) {
          case SQLITE_NULL: break
          case SQLITE_INTEGER: checksum &+= Int(sqlite3_column_int64(handle, column))
          case SQLITE_FLOAT: checksum &+= Int(sqlite3_column_double(handle, column))
          case SQLITE_BLOB:
            _ = sqlite3_column_blob(handle, column)
            checksum &+= Int(sqlite3_column_bytes(handle, column))
          default:
            _ = sqlite3_column_text(handle, column)
            checksum &+= Int(sqlite3_column_bytes(handle, column))
          }
        }
        code = sqlite3_step(handle)
      }
      guard code == SQLITE_DONE else {
        let message = String(cString: sqlite3_errmsg(database.handle))
        sqlite3_reset(handle)
        throw BenchError("replaying \(String(cString: sqlite3_sql(handle))): \(message)")
      }
      sqlite3_reset(handle)
    }
    return checksum
  }
}
