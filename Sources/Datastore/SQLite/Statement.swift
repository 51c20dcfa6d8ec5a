import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A value SQLite can store in a column or take as a parameter.
public enum SQLValue: Equatable, Sendable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])
}

// SQLITE_TRANSIENT tells SQLite to copy bound text and blobs before the call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Reset right after each use so it never holds a read transaction open.
public final class Statement {
  let handle: OpaquePointer
  unowned let connection: Connection
  public let sql: String
  /// `columnPositions`, once read.
  var namedColumns: [String: Int]?

  init(connection: Connection, sql: String) throws {
    var handle: OpaquePointer?
    let code = sqlite3_prepare_v2(connection.handle, sql, -1, &handle, nil)
    guard code == SQLITE_OK, let handle else {
      throw SQLiteError(code: code, connection: connection.handle, sql: sql)
    }
    self.handle = handle
    self.connection = connection
    self.sql = sql
  }

  deinit { sqlite3_finalize(handle) }

  /// How many virtual-machine steps the statement has run since the last call (which resets the
  /// count): the work a statement did, counted exactly, for tests that prove two runs alike.
  public func takeStepCount() -> Int {
    Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_VM_STEP, 1))
  }

  /// Binds positional parameters (1-based in SQL, 0-based here).
  public func bind(_ values: [SQLValue]) throws {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let code: Int32
      switch value {
      case .null: code = sqlite3_bind_null(handle, index)
      case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
      case .real(let double): code = sqlite3_bind_double(handle, index, double)
      case .text(let string):
        // By its length, not up to a NUL: text holding one (a `where` value, an id) is bound
        // whole, never cut to another value.
        var text = string
        code = text.withUTF8 { bytes in
          // Empty text still needs a pointer: a nil one binds NULL.
          guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, transient)
          }
          return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text64(
              handle, index, $0, sqlite3_uint64(bytes.count), transient, UInt8(SQLITE_UTF8))
          }
        }
      case .blob(let bytes):
        code = bytes.withUnsafeBytes {
          sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), transient)
        }
      }
      guard code == SQLITE_OK else {
        throw SQLiteError(code: code, connection: connection.handle, sql: sql)
      }
    }
  }

  /// Runs the statement for its effect.
  public func run(_ values: [SQLValue] = []) throws {
    try bind(values)
    defer { sqlite3_reset(handle) }
    while try step() {}
  }

  /// Runs a query and hands each row to `body`; the statement is reset afterwards.
  public func forEachRow(_ values: [SQLValue] = [], _ body: (Row) throws -> Void) throws {
    try bind(values)
    defer { sqlite3_reset(handle) }
    while try step() { try body(Row(statement: self)) }
  }

  /// Runs a query and maps every row.
  public func rows<T>(_ values: [SQLValue] = [], _ transform: (Row) throws -> T) throws -> [T] {
    var result: [T] = []
    try forEachRow(values) { result.append(try transform($0)) }
    return result
  }

  /// The first row mapped, or nil when there is none.
  public func firstRow<T>(_ values: [SQLValue] = [], _ transform: (Row) throws -> T) throws -> T? {
    try bind(values)
    defer { sqlite3_reset(handle) }
    return try step() ? transform(Row(statement: self)) : nil
  }

  /// The virtual machine steps this statement has run since the last `reset: true`: tests
  /// compare the work of two queries by it, not by time.
  func virtualMachineSteps(reset: Bool = false) -> Int {
    Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_VM_STEP, reset ? 1 : 0))
  }

  private func step() throws -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    case let code: throw SQLiteError(code: code, connection: connection.handle, sql: sql)
    }
  }
}

/// The current row of a stepping statement; valid only inside the row callback.
public struct Row {
  let statement: Statement

  /// How many columns the row has.
  public var columnCount: Int32 { sqlite3_column_count(statement.handle) }

  public func isNull(_ column: Int32) -> Bool {
    sqlite3_column_type(statement.handle, column) == SQLITE_NULL
  }

  public func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement.handle, column) }

  public func double(_ column: Int32) -> Double { sqlite3_column_double(statement.handle, column) }

  /// Text of a column; nil for NULL. Bytes that are not UTF-8 (written by another program) throw.
  public func text(_ column: Int32) throws -> String? {
    guard let pointer = sqlite3_column_text(statement.handle, column) else { return nil }
    let count = Int(sqlite3_column_bytes(statement.handle, column))
    let bytes = UnsafeBufferPointer(start: pointer, count: count)
    guard let string = String(validating: bytes, as: UTF8.self) else {
      throw DatastoreError(.systemError, detail: "stored text is not valid UTF-8")
    }
    return string
  }

  /// Text of a column, bytes that are not UTF-8 shown as U+FFFD: for rows a person reads, where
  /// one byte written by another program must not make the whole listing unreadable.
  public func lossyText(_ column: Int32) -> String? {
    guard let pointer = sqlite3_column_text(statement.handle, column) else { return nil }
    let count = Int(sqlite3_column_bytes(statement.handle, column))
    return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
  }

  public func blob(_ column: Int32) -> [UInt8] {
    let count = Int(sqlite3_column_bytes(statement.handle, column))
    guard count > 0, let pointer = sqlite3_column_blob(statement.handle, column) else { return [] }
    return Array(UnsafeRawBufferPointer(start: pointer, count: count))
  }
}
