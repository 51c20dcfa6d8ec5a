import CSQLite

/// A failure reported by SQLite, with the extended result code and the statement that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
  public let extendedCode: Int32
  public let message: String
  public let sql: String?

  /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, …).
  public var primaryCode: Int32 { extendedCode & 0xFF }

  public var description: String {
    var text = "SQLite error \(extendedCode): \(message)"
    if let sql { text += " (in: \(sql))" }
    return text
  }

  init(code: Int32, connection: OpaquePointer?, sql: String?) {
    extendedCode = connection.map { sqlite3_extended_errcode($0) } ?? code
    if let connection, let text = sqlite3_errmsg(connection) {
      message = String(cString: text)
    } else {
      message = String(cString: sqlite3_errstr(code))
    }
    self.sql = sql
  }
}

/// A trigger's refusal, one format for the triggers that raise it and the engine that reads it:
/// `RAISE(ABORT, 'E404001 thread')`, a backend code and, after one space, the field it names, or
/// the words of a reason the catalogue raises (`StoreReason.raised`, as PostgreSQL's refusals).
/// Nothing else a constraint says is taken for one (the whole message must be this shape).
struct TriggerRefusal: Equatable {
  let code: ErrorCode
  let field: String?
  let reason: StoreReason?

  init(_ code: ErrorCode, field: String? = nil) {
    self.code = code
    self.field = field
    reason = nil
  }

  init(_ code: ErrorCode, reason: StoreReason) {
    self.code = code
    field = nil
    self.reason = reason
  }

  /// The refusal as a trigger's SQL expression; `field` is a `Validation.isName` name.
  var sql: String {
    let said = reason?.raisedWords ?? field
    return "RAISE(ABORT, \(SQL.quotedLiteral(code.rawValue + (said.map { " " + $0 } ?? ""))))"
  }

  /// The refusal `error` carries, or nil when it is no trigger's.
  init?(_ error: SQLiteError) {
    guard error.primaryCode == SQLITE_CONSTRAINT else { return nil }
    let parts = error.message.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
    guard let code = ErrorCode(rawValue: String(parts[0])) else { return nil }
    guard parts.count == 2 else {
      self.init(code)
      return
    }
    if let reason = StoreReason.raised(String(parts[1])) {
      self.init(code, reason: reason)
    } else if Validation.isName(String(parts[1])) {
      self.init(code, field: String(parts[1]))
    } else {
      return nil
    }
  }
}
