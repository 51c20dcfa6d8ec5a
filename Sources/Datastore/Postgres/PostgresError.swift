import CLibPQ

/// A failure reported by libpq or the server: the SQLSTATE (when the server sent one), its
/// message, and the statement that failed.
struct PostgresError: Error, CustomStringConvertible, Sendable {
  /// Five characters such as `40001`; nil for failures libpq found itself (a lost connection).
  let sqlState: String?
  let message: String
  let sql: String?
  /// The table the server named (`PG_DIAG_TABLE_NAME`), for a constraint's failure.
  let table: String?

  var description: String {
    var text = "PostgreSQL error \(sqlState ?? "-----"): \(message)"
    if let sql { text += " (in: \(sql))" }
    return text
  }

  /// Serialization failures and deadlocks: the whole transaction may simply be run again.
  var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }

  init(sqlState: String?, message: String, sql: String?, table: String? = nil) {
    self.sqlState = sqlState
    self.message = message
    self.sql = sql
    self.table = table
  }

  init(result: OpaquePointer?, connection: OpaquePointer?, sql: String?, pq: ForumLibPQ) {
    if let result, let state = pq.PQresultErrorField(result, diagnosticSQLState) {
      sqlState = String(cString: state)
    } else {
      sqlState = nil
    }
    var text = ""
    if let result, let primary = pq.PQresultErrorField(result, diagnosticMessage) {
      text = String(cString: primary)
    } else if let connection, let raw = pq.PQerrorMessage(connection) {
      text = String(cString: raw)
    }
    message = PostgresError.oneLine(text)
    self.sql = sql
    table = result.flatMap { pq.PQresultErrorField($0, diagnosticTable) }.map {
      String(cString: $0)
    }
  }

  /// libpq's messages end in a newline and sometimes span lines; a person gets one line.
  static func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }
      .filter { !$0.isEmpty }.joined(separator: "; ")
  }

  /// The datastore error a caller sees. Our triggers raise `FA4xx` states carrying the backend's
  /// codes; the server's own states map to the nearest code.
  var datastoreError: DatastoreError {
    switch sqlState {
    case "FA403", "42501": return DatastoreError(.noAccess, detail: detailForPerson)
    case "FA404": return DatastoreError(.notFound)
    case "FA400": return DatastoreError(.invalid, field: message)
    case "FA401": return DatastoreError(.authentication, detail: message)
    case "23505":
      return DatastoreError(.invalid, field: uniqueField, reason: StoreReason.alreadyExists)
    case "54000", "22001": return DatastoreError(.invalid, field: "value", detail: message)
    // A CHECK of the schema: a text, an object or a file over its size, or nested too deep.
    case "23514": return DatastoreError(.invalid, field: "value", detail: message)
    case .some(let state) where state.hasPrefix("22"):
      return DatastoreError(.invalid, field: "value", detail: message)
    case "42P01", "3F000", "42883":
      return DatastoreError(
        .systemError, reason: BoardAccessReason.schemaMissing)
    default: return DatastoreError(.systemError, detail: message)
    }
  }

  private var detailForPerson: String? { sqlState == "42501" ? message : nil }

  /// Which unique value is taken: the table says, never the words of the message.
  private var uniqueField: String {
    table == "files" || table == "private_files" ? "fileName" : "objectId"
  }
}

// postgres_ext.h defines these as character constants, which Swift does not import.
private let diagnosticSQLState = Int32(UInt8(ascii: "C"))
private let diagnosticMessage = Int32(UInt8(ascii: "M"))
private let diagnosticTable = Int32(UInt8(ascii: "t"))
