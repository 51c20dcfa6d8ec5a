import CLibPQ

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A parameter sent to the server: text (the server infers its type from the statement), bytes
/// sent in binary (bytea), or NULL.
enum PostgresValue: Sendable, Equatable {
  case text(String)
  case bytes([UInt8])
  case null
}

/// One libpq connection. Statements with parameters are prepared once per connection and
/// reused; nothing is ever spliced into SQL text.
final class PostgresConnection {
  let handle: OpaquePointer
  /// libpq, loaded when the first connection is made (`LibPQ`).
  let pq: ForumLibPQ
  private var prepared: [String: String] = [:]
  private var transactionDepth = 0
  /// Messages sent that each wait for the server's answer (a statement run or prepared): what
  /// a request costs on the wire, counted for the tests and benchmarks of `forum serve`.
  private(set) var roundTrips = 0
  /// Where it connected, for `watcher`.
  private let uri: String
  /// A second connection to the same place, made the first time a statement in a transaction
  /// runs a second, to ask the server whether that statement waits for a lock (`waitsForLock`).
  private var watcher: PostgresConnection?

  /// Parameters libpq accepts in a URI; anything else (a typo, a parameter from another client)
  /// is refused before connecting.
  static func checkParameters(_ uri: String) throws {
    let pq = try LibPQ.functions()
    var message: UnsafeMutablePointer<CChar>?
    guard let options = pq.PQconninfoParse(uri, &message) else {
      let text = message.map { String(cString: $0) } ?? "cannot parse the URI"
      if let message { pq.PQfreemem(message) }
      throw DatastoreError(
        .invalid, field: "database URI",
        detail: "\(PostgresError.oneLine(text)); see libpq's connection parameters")
    }
    pq.PQconninfoFree(options)
  }

  /// Connects to `uri` (a libpq connection URI). Failures keep libpq's one-line reason and say
  /// what kind of failure it was, so callers can name the fix.
  init(uri: String, connectTimeout: Int = 10) throws {
    try PostgresConnection.checkParameters(uri)
    let pq = try LibPQ.functions()
    // Defaults that apply unless the URI sets them: a bounded wait for an unreachable host, and
    // UTF-8 whatever the server's default encoding. The URI comes last: libpq lets values
    // expanded from it override the keywords before it.
    let keys = ["connect_timeout", "client_encoding", "application_name", "dbname"]
    let values = [String(connectTimeout), "UTF8", "forum", uri]
    let handle = keys.withCStringArray { keyPointers in
      values.withCStringArray { valuePointers in
        pq.PQconnectdbParams(keyPointers, valuePointers, 1)
      }
    }
    guard let handle else {
      throw PostgresConnectionFailure(kind: .unreachable, message: "out of memory")
    }
    guard pq.PQstatus(handle) == CONNECTION_OK else {
      let message = PostgresError.oneLine(
        pq.PQerrorMessage(handle).map { String(cString: $0) } ?? "")
      let usedPassword = pq.PQconnectionUsedPassword(handle) == 1
      let needsPassword = pq.PQconnectionNeedsPassword(handle) == 1
      let role = pq.PQuser(handle).map { String(cString: $0) }
      pq.PQfinish(handle)
      throw PostgresConnectionFailure(
        kind: PostgresConnectionFailure.classify(
          message, usedPassword: usedPassword, needsPassword: needsPassword),
        message: message, role: role)
    }
    self.handle = handle
    self.pq = pq
    self.uri = uri
    // Notices (e.g. "relation already exists, skipping") are not for the person at the prompt.
    _ = pq.PQsetNoticeProcessor(handle, { _, _ in }, nil)
  }

  deinit { pq.PQfinish(handle) }

  /// Runs SQL without parameters; several statements may be separated by `;`. A statement
  /// waiting on a lock can be interrupted (`awaitResult`) unless `interruptible` is false (the
  /// ROLLBACK that undoes an interrupted write).
  func execute(_ sql: String, interruptible: Bool = true) throws {
    roundTrips += 1
    guard pq.PQsendQuery(handle, sql) == 1 else {
      throw PostgresError(result: nil, connection: handle, sql: sql, pq: pq)
    }
    let result = try awaitResult(sql: sql, interruptible: interruptible)
    defer { pq.PQclear(result) }
    try check(result, sql: sql)
  }

  /// Runs one statement with parameters `$1…` and returns its rows.
  @discardableResult
  func query(_ sql: String, _ values: [PostgresValue] = []) throws -> PostgresResult {
    let name = try preparedName(for: sql, parameterCount: values.count)
    roundTrips += 1
    let sent = withParameters(values) { pointers, lengths, formats in
      pq.PQsendQueryPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 0)
    }
    guard sent == 1 else { throw PostgresError(result: nil, connection: handle, sql: sql, pq: pq) }
    let result = try awaitResult(sql: sql, interruptible: true)
    do {
      try check(result, sql: sql)
    } catch {
      pq.PQclear(result)
      throw error
    }
    return PostgresResult(result!, pq: pq)
  }

  /// Runs one statement with parameters and hands its rows to `row` as they arrive, one at a
  /// time (libpq's single-row mode), so no result is ever held whole. When `row` throws, the
  /// server is asked to cancel the statement, the rows it had already sent are dropped, and the
  /// error is thrown: an answer refused for its size costs what was read up to the refusal,
  /// not the whole result (issue 28 H5).
  func query(
    _ sql: String, _ values: [PostgresValue], eachRow row: (PostgresResult) throws -> Void
  ) throws {
    let name = try preparedName(for: sql, parameterCount: values.count)
    roundTrips += 1
    let sent = withParameters(values) { pointers, lengths, formats in
      pq.PQsendQueryPrepared(handle, name, Int32(values.count), pointers, lengths, formats, 0)
    }
    guard sent == 1 else { throw PostgresError(result: nil, connection: handle, sql: sql, pq: pq) }
    // Refused only when no statement was sent: then the rows come as one result, read alike.
    _ = pq.PQsetSingleRowMode(handle)
    var wait = Wait()
    var refusal: (any Error)?
    var failure: OpaquePointer?
    while true {
      waitWhileBusy(&wait, interruptible: true)
      guard let result = pq.PQgetResult(handle) else { break }
      let status = pq.PQresultStatus(result)
      let rows = status == PGRES_SINGLE_TUPLE || status == PGRES_TUPLES_OK
      if refusal == nil && failure == nil && rows {
        do {
          try row(PostgresResult(result, pq: pq))
        } catch {
          refusal = error
          wait.gaveUp = true
          cancel()
        }
      } else if failure == nil && refusal == nil && !rows && status != PGRES_COMMAND_OK {
        failure = result
      } else {
        pq.PQclear(result)
      }
    }
    if let refusal { throw refusal }
    if let failure { try throwFailure(failure, sql: sql, wait) }
    if wait.cancelled { Interrupt.clear() }
  }

  /// What waiting for one statement saw and did.
  private struct Wait {
    let started = PostgresConnection.monotonicSeconds()
    var told = false
    var nextLook = 1.0
    /// Ctrl-C asked the server to cancel.
    var cancelled = false
    /// The budget asked the server to cancel.
    var stopped = false
    /// The reader no longer wants the rows and asked the server to cancel: no more asking.
    var gaveUp = false
  }

  /// Waits while the statement sent has nothing to hand back, as SQLite's busy handler does for
  /// a lock: a write that has waited a second says so (`Interrupt.onLongWait`: another member's
  /// transaction holds a row it needs), and Ctrl-C or the budget asks the server to cancel the
  /// statement, which then fails and its transaction rolls back: nothing is saved.
  private func waitWhileBusy(_ wait: inout Wait, interruptible: Bool) {
    while pq.PQisBusy(handle) == 1 {
      var descriptor = pollfd(fd: pq.PQsocket(handle), events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, 50)
      if ready < 0 && errno != EINTR { break }
      if pq.PQconsumeInput(handle) == 0 { break }
      let asking = interruptible && !wait.gaveUp
      if asking && !wait.cancelled && Interrupt.requested {
        wait.cancelled = true
        cancel()
      }
      if asking && !wait.stopped, budget?.check() != nil {
        wait.stopped = true
        cancel()
      }
      let waited = PostgresConnection.monotonicSeconds() - wait.started
      if !wait.told && inTransaction && waited > wait.nextLook {
        wait.nextLook = waited + 1
        // Only a wait is said to be one: `forum init`'s own long steps are work, not waiting.
        if waitsForLock() {
          wait.told = true
          Interrupt.onLongWait?(.anotherWriter)
        }
      }
    }
  }

  /// Waits for what a sent statement returns (`waitWhileBusy`). A statement that finished
  /// before a cancel reached the server stands, and so does the Ctrl-C no longer (it came too
  /// late to stop anything, and "nothing was saved" would be untrue). Returns the last result,
  /// the first error if any statement failed.
  private func awaitResult(sql: String, interruptible: Bool) throws -> OpaquePointer? {
    var wait = Wait()
    waitWhileBusy(&wait, interruptible: interruptible)
    var last: OpaquePointer?
    var failure: OpaquePointer?
    while let result = pq.PQgetResult(handle) {
      let status = pq.PQresultStatus(result)
      if failure == nil && status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK {
        failure = result
        if let last { pq.PQclear(last) }
        last = nil
      } else if failure != nil {
        pq.PQclear(result)
      } else {
        if let last { pq.PQclear(last) }
        last = result
      }
    }
    if let failure { try throwFailure(failure, sql: sql, wait) }
    if wait.cancelled { Interrupt.clear() }
    return last
  }

  /// The error of a failed result (cleared here): the budget's reason or `Interrupted` when
  /// the failure is the cancel they asked for.
  private func throwFailure(_ failure: OpaquePointer, sql: String, _ wait: Wait) throws -> Never {
    let error = PostgresError(result: failure, connection: handle, sql: sql, pq: pq)
    pq.PQclear(failure)
    if wait.stopped && error.state == .queryCanceled, let why = budget?.error { throw why }
    if wait.cancelled && error.state == .queryCanceled { throw Interrupted() }
    throw error
  }

  /// Limits the statements run from now on (nil: none): while one runs, its wait for the answer
  /// looks at the budget and, when it says stop, asks the server to cancel the statement, which
  /// then fails (its transaction rolls back) with the budget's reason.
  var budget: StatementBudget?

  /// True when the statement this connection runs waits for a lock another session holds (a
  /// row another member's open transaction wrote, a table a DDL step needs), asked on
  /// `watcher`. When the server cannot be asked, true: better a notice too many than silence.
  private func waitsForLock() -> Bool {
    do {
      if watcher == nil { watcher = try PostgresConnection(uri: uri, connectTimeout: 2) }
      return try watcher!.query(
        "SELECT cardinality(pg_blocking_pids($1::integer)) > 0",
        [.text(String(pq.PQbackendPID(handle)))]
      ).bool(0, 0)
    } catch {
      return true
    }
  }

  private static func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }

  /// Asks the server to stop the statement running on this connection.
  private func cancel() {
    guard let token = pq.PQgetCancel(handle) else { return }
    defer { pq.PQfreeCancel(token) }
    var reason = [CChar](repeating: 0, count: 256)
    _ = pq.PQcancel(token, &reason, Int32(reason.count))
  }

  /// Statements kept prepared on the server; past this they are all deallocated and prepared
  /// again as they come (a server renders each shape of an app's `where` as its own SQL).
  static let maximumPreparedStatements = 512

  private func preparedName(for sql: String, parameterCount: Int) throws -> String {
    if let name = prepared[sql] { return name }
    if prepared.count >= PostgresConnection.maximumPreparedStatements {
      try execute("DEALLOCATE ALL", interruptible: false)
      prepared.removeAll(keepingCapacity: true)
    }
    let name = "forum_\(prepared.count + 1)"
    roundTrips += 1
    let result = pq.PQprepare(handle, name, sql, Int32(parameterCount), nil)
    defer { pq.PQclear(result) }
    try check(result, sql: sql)
    prepared[sql] = name
    return name
  }

  /// How many statements are prepared (tests check the bound).
  var preparedStatementCount: Int { prepared.count }

  private func check(_ result: OpaquePointer?, sql: String) throws {
    let status = result.map(pq.PQresultStatus) ?? PGRES_FATAL_ERROR
    guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
      throw PostgresError(result: result, connection: handle, sql: sql, pq: pq)
    }
  }

  /// The connection's socket: readable when the server sent something unasked (a notification).
  var socket: Int32 { pq.PQsocket(handle) }

  /// Reads what the server sent without being asked and counts the notifications among it (they
  /// are dropped: ours carry nothing). Throws when the connection is gone.
  func drainNotifications() throws -> Int {
    guard pq.PQconsumeInput(handle) == 1, !isBroken else {
      throw PostgresError(
        sqlState: SQLState.connectionFailure.rawValue,
        message: PostgresError.oneLine(
          pq.PQerrorMessage(handle).map { String(cString: $0) } ?? "the connection is closed"),
        sql: nil)
    }
    var count = 0
    while let notification = pq.PQnotifies(handle) {
      count += 1
      pq.PQfreemem(notification)
    }
    return count
  }

  /// True inside `transaction`.
  var inTransaction: Bool { transactionDepth > 0 }

  /// True when the server closed the connection (it restarted, or an administrator ended it).
  var isBroken: Bool { pq.PQstatus(handle) != CONNECTION_OK }

  /// Group commit: `count` independent writes in one transaction, each in its own savepoint,
  /// committed once. A write that throws undoes itself alone and its error is returned at its
  /// index (nil: written); one that met a deadlock or serialization failure is undone and run
  /// again (a few times), as a whole transaction would be. Throws when the transaction cannot
  /// begin or commit: then nothing of any write is in the database. A savepoint's end and the
  /// next one's start travel as one message; a group of one is a plain transaction.
  func group(_ count: Int, retries: Int = 8, _ write: (Int) throws -> Void) throws -> [Error?] {
    precondition(transactionDepth == 0, "a group of writes is a transaction of its own")
    guard count > 1 else {
      do {
        if count == 1 { try transaction(retries: retries) { try write(0) } }
        return Array(repeating: nil, count: count)
      } catch {
        return [error]
      }
    }
    var errors = [Error?](repeating: nil, count: count)
    try execute("BEGIN; SAVEPOINT item")
    transactionDepth = 1
    defer { transactionDepth = 0 }
    do {
      for index in 0..<count {
        if index > 0 { try execute("RELEASE SAVEPOINT item; SAVEPOINT item") }
        var attempt = 0
        while true {
          attempt += 1
          do {
            try write(index)
            errors[index] = nil
          } catch {
            // The savepoint stays after a rollback to it: a write run again starts there.
            try execute("ROLLBACK TO SAVEPOINT item", interruptible: false)
            if let failure = error as? PostgresError, failure.isRetryable, attempt <= retries {
              usleep(UInt32.random(in: 1_000...(5_000 * UInt32(attempt))))
              continue
            }
            errors[index] = error
          }
          break
        }
      }
      try execute("RELEASE SAVEPOINT item; COMMIT")
    } catch {
      try? execute("ROLLBACK", interruptible: false)
      throw error
    }
    return errors
  }

  /// Runs `body` in a transaction that commits on return and rolls back on throw. A
  /// serialization failure or deadlock runs the whole transaction again (a few times); nested
  /// calls join the outer transaction through a savepoint.
  func transaction<T>(retries: Int = 8, _ body: () throws -> T) throws -> T {
    if transactionDepth > 0 {
      try execute("SAVEPOINT nested")
      transactionDepth += 1
      defer { transactionDepth -= 1 }
      do {
        let result = try body()
        try execute("RELEASE SAVEPOINT nested")
        return result
      } catch {
        try? execute(
          "ROLLBACK TO SAVEPOINT nested; RELEASE SAVEPOINT nested", interruptible: false)
        throw error
      }
    }
    var attempt = 0
    while true {
      attempt += 1
      try execute("BEGIN")
      transactionDepth = 1
      do {
        let result = try body()
        try execute("COMMIT")
        transactionDepth = 0
        return result
      } catch let error as PostgresError where error.isRetryable && attempt <= retries {
        try? execute("ROLLBACK", interruptible: false)
        transactionDepth = 0
        // A short random pause so the transactions that collided do not collide again.
        usleep(UInt32.random(in: 1_000...(5_000 * UInt32(attempt))))
      } catch {
        try? execute("ROLLBACK", interruptible: false)
        transactionDepth = 0
        throw error
      }
    }
  }
}

/// Why a connection could not be made, in the terms of what to do about it.
struct PostgresConnectionFailure: Error, CustomStringConvertible {
  enum Kind { case unreachable, loginRefused, notMember }
  let kind: Kind
  let message: String
  var role: String?

  var description: String { message }

  static func classify(_ message: String, usedPassword: Bool, needsPassword: Bool) -> Kind {
    let refusals = [
      "authentication failed", "no password supplied", "does not exist",
      "no pg_hba.conf entry", "not permitted to log in", "too many connections for role",
      "password", "permission denied for database",
    ]
    // `forum init` gives CONNECT on the board's database to forum_member only.
    if message.contains("permission denied for database") { return .notMember }
    if needsPassword || usedPassword { return .loginRefused }
    return refusals.contains(where: message.contains) ? .loginRefused : .unreachable
  }

  var datastoreError: DatastoreError {
    switch kind {
    case .unreachable:
      return DatastoreError(
        .systemError, reason: BoardAccessReason.serverUnreachable(error: message))
    case .notMember:
      return DatastoreError(
        .noAccess, reason: BoardAccessReason.notForumMember(role: role ?? "your role"))
    case .loginRefused:
      return DatastoreError(.authentication, reason: BoardAccessReason.loginRefused(error: message))
    }
  }
}

/// Rows of a result, read as text (bytea as its `\x` hex form). Cleared when released.
final class PostgresResult {
  let handle: OpaquePointer
  let rowCount: Int
  let columnCount: Int
  private let pq: ForumLibPQ

  init(_ handle: OpaquePointer, pq: ForumLibPQ) {
    self.handle = handle
    self.pq = pq
    rowCount = Int(pq.PQntuples(handle))
    columnCount = Int(pq.PQnfields(handle))
  }

  deinit { pq.PQclear(handle) }

  func isNull(_ row: Int, _ column: Int) -> Bool {
    pq.PQgetisnull(handle, Int32(row), Int32(column)) == 1
  }

  func text(_ row: Int, _ column: Int) -> String? {
    guard !isNull(row, column) else { return nil }
    let length = Int(pq.PQgetlength(handle, Int32(row), Int32(column)))
    let pointer = pq.PQgetvalue(handle, Int32(row), Int32(column))!
    return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
      String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
  }

  func int(_ row: Int, _ column: Int) -> Int64 {
    guard !isNull(row, column), let value = pq.PQgetvalue(handle, Int32(row), Int32(column)) else {
      return 0
    }
    return Int64(String(cString: value)) ?? 0
  }

  func bool(_ row: Int, _ column: Int) -> Bool {
    text(row, column) == "t"
  }

  /// A bytea column sent in text form (`\x` then two hex digits a byte).
  func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
    guard !isNull(row, column) else { return nil }
    let length = Int(pq.PQgetlength(handle, Int32(row), Int32(column)))
    let pointer = pq.PQgetvalue(handle, Int32(row), Int32(column))!
    return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { raw in
      guard length >= 2, raw[0] == UInt8(ascii: "\\"), raw[1] == UInt8(ascii: "x") else {
        return nil
      }
      var bytes = [UInt8]()
      bytes.reserveCapacity((length - 2) / 2)
      var index = 2
      while index + 1 < length {
        bytes.append(PostgresResult.nibble(raw[index]) << 4 | PostgresResult.nibble(raw[index + 1]))
        index += 2
      }
      return bytes
    }
  }

  private static func nibble(_ digit: UInt8) -> UInt8 {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    default: return digit - UInt8(ascii: "A") + 10
    }
  }

  /// Each column's position by its field name (as PostgreSQL gives it: an unquoted alias in
  /// lower case).
  var columnPositions: [String: Int] {
    var positions: [String: Int] = [:]
    for column in 0..<columnCount {
      if let name = pq.PQfname(handle, Int32(column)) { positions[String(cString: name)] = column }
    }
    return positions
  }

  /// Every row mapped by `transform`.
  func rows<T>(_ transform: (Int) throws -> T) rethrows -> [T] {
    try (0..<rowCount).map(transform)
  }
}

/// Parameter arrays for PQexecPrepared, alive only during `body`.
private func withParameters<T>(
  _ values: [PostgresValue],
  _ body: (
    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
  ) -> T
) -> T {
  var buffers: [UnsafeMutablePointer<CChar>?] = []
  var lengths: [Int32] = []
  var formats: [Int32] = []
  for value in values {
    switch value {
    case .null:
      buffers.append(nil)
      lengths.append(0)
      formats.append(0)
    case .text(let text):
      buffers.append(strdup(text))
      lengths.append(0)
      formats.append(0)
    case .bytes(let bytes):
      let buffer = malloc(max(1, bytes.count))!
      bytes.withUnsafeBytes { source in
        if let base = source.baseAddress { buffer.copyMemory(from: base, byteCount: bytes.count) }
      }
      buffers.append(buffer.assumingMemoryBound(to: CChar.self))
      lengths.append(Int32(bytes.count))
      formats.append(1)
    }
  }
  defer { for buffer in buffers { free(buffer) } }
  let constants = buffers.map { UnsafePointer($0) }
  return constants.withUnsafeBufferPointer { pointers in
    lengths.withUnsafeBufferPointer { lengthPointer in
      formats.withUnsafeBufferPointer { formatPointer in
        body(pointers.baseAddress, lengthPointer.baseAddress, formatPointer.baseAddress)
      }
    }
  }
}

extension Array where Element == String {
  /// A NULL-terminated array of C strings, alive only during `body`.
  fileprivate func withCStringArray<T>(
    _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T
  ) -> T {
    let copies = map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
  }
}
