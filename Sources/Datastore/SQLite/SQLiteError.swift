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
