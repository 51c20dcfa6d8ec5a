import CSQLite

/// A parameter value as SQLite bound it.
enum BoundValue: Equatable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  case blob([UInt8])
}

/// One statement as the Datastore ran it: its SQL text, character for character, and the values
/// bound to its `?` parameters.
struct CapturedStatement {
  let sql: String
  let values: [BoundValue]
}

/// Records the SQL the Datastore runs, without touching the Datastore: an SQLite auto-extension
/// puts a `sqlite3_trace_v2` hook on every connection this process opens, and while `record` runs
/// the hook keeps each statement's text (`sqlite3_sql`) and its bound values (recovered from
/// `sqlite3_expanded_sql`). The same hook can also run set-up SQL on each new connection.
enum SQLCapture {
  private nonisolated(unsafe) static var recording: [CapturedStatement]?
  private nonisolated(unsafe) static var failures: [String] = []
  /// Connections opened while this is false get no hook (the bench's own raw connection).
  nonisolated(unsafe) static var hookNewConnections = true
  /// Run on each hooked connection as it opens (the seed's bigger page cache).
  nonisolated(unsafe) static var setUpSQL: String?

  /// Installs the auto-extension; call before opening the board.
  static func install() {
    let entry:
      @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, OpaquePointer?
      ) -> Int32 = { connection, _, _ in
        guard SQLCapture.hookNewConnections else { return SQLITE_OK }
        if let sql = SQLCapture.setUpSQL {
          let code = sqlite3_exec(connection, sql, nil, nil, nil)
          guard code == SQLITE_OK else { return code }
        }
        return sqlite3_trace_v2(connection, UInt32(SQLITE_TRACE_STMT), SQLCapture.trace, nil)
      }
    sqlite3_auto_extension(unsafeBitCast(entry, to: (@convention(c) () -> Void).self))
  }

  /// Runs `body` and returns every statement it ran, in order.
  static func record(_ body: () throws -> Void) throws -> [CapturedStatement] {
    recording = []
    failures = []
    defer { recording = nil }
    try body()
    guard failures.isEmpty else {
      throw BenchError("cannot recover the parameters of: \(failures.joined(separator: "; "))")
    }
    return recording ?? []
  }

  private static let trace:
    @convention(c) (
      UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?
    ) -> Int32 = { _, _, statement, text in
      guard SQLCapture.recording != nil, let statement else { return 0 }
      // A trigger's program reports itself as "-- TRIGGER name" on the statement that fired it:
      // that statement is recorded once, and replaying it fires the trigger again.
      if let text, text.assumingMemoryBound(to: CChar.self).pointee == CChar(UInt8(ascii: "-")) {
        return 0
      }
      let handle = OpaquePointer(statement)
      guard let template = sqlite3_sql(handle).map({ String(cString: $0) }) else { return 0 }
      // FTS5 reads and writes its shadow tables (`'main'.'search_text_data'`) with statements of
      // its own: replaying the statement on the virtual table runs them again.
      if template.contains("'main'.'") { return 0 }
      guard let expandedPointer = sqlite3_expanded_sql(handle) else {
        SQLCapture.failures.append(template)
        return 0
      }
      defer { sqlite3_free(expandedPointer) }
      let expanded = String(cString: expandedPointer)
      if let values = parameters(template: template, expanded: expanded) {
        SQLCapture.recording?.append(CapturedStatement(sql: template, values: values))
      } else {
        SQLCapture.failures.append(template)
      }
      return 0
    }

  /// The values SQLite substituted for the `?` parameters of `template` to produce `expanded`:
  /// outside quotes the two texts agree byte for byte except where a `?` became a literal.
  static func parameters(template: String, expanded: String) -> [BoundValue]? {
    let t = Array(template.utf8)
    let e = Array(expanded.utf8)
    var (i, j) = (0, 0)
    var values: [BoundValue] = []
    var quote: UInt8?
    while i < t.count {
      let byte = t[i]
      if quote == nil && byte == UInt8(ascii: "?") {
        guard let (value, end) = literal(e, from: j) else { return nil }
        values.append(value)
        i += 1
        j = end
        continue
      }
      guard j < e.count, e[j] == byte else { return nil }
      if let open = quote {
        if byte == open { quote = nil }
      } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
        quote = byte
      }
      i += 1
      j += 1
    }
    return j == e.count ? values : nil
  }

  /// The literal `sqlite3_expanded_sql` writes for a bound value, starting at `start`.
  private static func literal(_ e: [UInt8], from start: Int) -> (BoundValue, Int)? {
    guard start < e.count else { return nil }
    if e[start] == UInt8(ascii: "'") {
      var bytes: [UInt8] = []
      var k = start + 1
      while k < e.count {
        if e[k] == UInt8(ascii: "'") {
          if k + 1 < e.count && e[k + 1] == UInt8(ascii: "'") {
            bytes.append(e[k])
            k += 2
            continue
          }
          return (.text(String(decoding: bytes, as: UTF8.self)), k + 1)
        }
        bytes.append(e[k])
        k += 1
      }
      return nil
    }
    if e[start] == UInt8(ascii: "x"), start + 1 < e.count, e[start + 1] == UInt8(ascii: "'") {
      guard let close = e[(start + 2)...].firstIndex(of: UInt8(ascii: "'")) else { return nil }
      let hex = String(decoding: e[(start + 2)..<close], as: UTF8.self)
      var bytes: [UInt8] = []
      var index = hex.startIndex
      while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
        bytes.append(byte)
        index = next
      }
      return (.blob(bytes), close + 1)
    }
    if e[start...].starts(with: Array("NULL".utf8)) { return (.null, start + 4) }
    var end = start
    let numeric = Set("0123456789+-.eE".utf8)
    while end < e.count && numeric.contains(e[end]) { end += 1 }
    let text = String(decoding: e[start..<end], as: UTF8.self)
    if let integer = Int64(text) { return (.integer(integer), end) }
    if let real = Double(text) { return (.real(real), end) }
    return nil
  }
}
