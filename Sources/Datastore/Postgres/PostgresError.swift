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
  var isRetryable: Bool { state == .serializationFailure || state == .deadlockDetected }

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

  /// The datastore error a caller sees. Our functions and triggers raise `FA4xx` states, each
  /// one backend code (`PostgresRefusal`); the server's own states map to the nearest code.
  var datastoreError: DatastoreError {
    if let refusal = PostgresRefusal(sqlState: sqlState, message: message) {
      return DatastoreError(
        refusal.code, field: refusal.field, reason: refusal.reason.map(Reason.store))
    }
    switch state {
    case .insufficientPrivilege?: return DatastoreError(.noAccess, detail: message)
    case .uniqueViolation?:
      return DatastoreError(.invalid, field: uniqueField, reason: StoreReason.alreadyExists)
    case .programLimitExceeded?, .stringDataRightTruncation?:
      return DatastoreError(.invalid, field: "value", detail: message)
    // A CHECK of the schema: a text, an object or a file over its size, or nested too deep.
    case .checkViolation?:
      if let storage = StoreReason.raised(message) {
        return DatastoreError(.invalid, field: "value", reason: storage)
      }
      return DatastoreError(.invalid, field: "value", detail: message)
    case let state? where state.isDataException:
      return DatastoreError(.invalid, field: "value", detail: message)
    case .undefinedTable?, .invalidSchemaName?, .undefinedFunction?:
      return DatastoreError(
        .systemError, reason: BoardAccessReason.schemaMissing)
    default: return DatastoreError(.systemError, detail: message)
    }
  }

  /// The state by name, when the server sent one.
  var state: SQLState? { sqlState.map(SQLState.init(rawValue:)) }

  /// Which unique value is taken: the table says, never the words of the message.
  private var uniqueField: String {
    table == "files" || table == "private_files" ? "fileName" : "objectId"
  }
}

/// The SQLSTATEs the engine acts on, by their names in PostgreSQL's appendix A.
struct SQLState: Hashable, Sendable {
  let rawValue: String

  static let insufficientPrivilege = SQLState(rawValue: "42501")
  static let queryCanceled = SQLState(rawValue: "57014")
  static let connectionFailure = SQLState(rawValue: "08006")
  static let serializationFailure = SQLState(rawValue: "40001")
  static let deadlockDetected = SQLState(rawValue: "40P01")
  static let uniqueViolation = SQLState(rawValue: "23505")
  static let checkViolation = SQLState(rawValue: "23514")
  static let programLimitExceeded = SQLState(rawValue: "54000")
  static let stringDataRightTruncation = SQLState(rawValue: "22001")
  static let undefinedTable = SQLState(rawValue: "42P01")
  static let invalidSchemaName = SQLState(rawValue: "3F000")
  static let undefinedFunction = SQLState(rawValue: "42883")

  /// Class 22: a value the server could not take (a bad cast, a number out of range).
  var isDataException: Bool { rawValue.hasPrefix("22") }
}

/// A refusal our SQL raises, one format for the SQL and its reader (as SQLite's
/// `TriggerRefusal`): `RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = '…'`, the state naming
/// the backend code. An `FA400`'s message is read only as the field it names (a
/// `Validation.isName` name, else `value`); the others' words are for psql's reader, and are the
/// refusal's reason when the catalogue raises them (`StoreReason.raised`).
struct PostgresRefusal: Equatable {
  let code: ErrorCode
  let field: String?
  var reason: StoreReason? = nil

  /// The states, by the backend code each carries.
  static let states: [String: ErrorCode] = [
    "FA400": .invalid, "FA401": .authentication, "FA403": .noAccess, "FA404": .notFound,
  ]

  init(_ code: ErrorCode, field: String? = nil) {
    self.code = code
    self.field = field
  }

  /// The refusal `sqlState` carries, or nil when it is none of ours.
  init?(sqlState: String?, message: String) {
    guard let sqlState, let code = Self.states[sqlState] else { return nil }
    self.init(
      code, field: code == .invalid ? (Validation.isName(message) ? message : "value") : nil)
    if code != .invalid { reason = StoreReason.raised(message) }
  }

  /// The refusal as a plpgsql statement: `field` (a name) as the message of an `FA400`,
  /// `words` (for psql's reader) as that of the others.
  func sql(saying reason: StoreReason) -> String { sql(saying: reason.raisedWords) }

  func sql(saying words: String? = nil) -> String {
    let state = Self.states.first { $0.value == code }?.key ?? "FA400"
    let message = (code == .invalid ? field : words) ?? DatastoreError(code).message
    return "RAISE EXCEPTION USING ERRCODE = '\(state)', MESSAGE = '"
      + message.replacing("'", with: "''") + "';"
  }
}

// postgres_ext.h defines these as character constants, which Swift does not import.
private let diagnosticSQLState = Int32(UInt8(ascii: "C"))
private let diagnosticMessage = Int32(UInt8(ascii: "M"))
private let diagnosticTable = Int32(UInt8(ascii: "t"))
