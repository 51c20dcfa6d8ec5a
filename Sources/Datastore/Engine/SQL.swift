/// SQL written with interpolation that binds values (as GRDB's `SQL` literals and postgres-nio's
/// `PostgresQuery`): every interpolated value becomes a parameter, never text of the statement.
/// Anything else that goes into the text says so by its label: `\(sql: fragment)` (SQL built the
/// same way), `\(column: name)` (an identifier, quoted) and `\(literal: text)` (a string
/// literal, quoted: class names and JSON paths, which partial and expression indexes only
/// match when they are written out). One piece of query code serves both engines: each
/// renders it in its dialect (`?` for SQLite, `$1`, `$2`… for PostgreSQL).
///
///     let query: SQL = "SELECT * FROM objects o WHERE o.class = \(literal: name) AND o.id > \(id)"
struct SQL: Sendable, Equatable, ExpressibleByStringInterpolation {
  enum Piece: Sendable, Equatable {
    /// Text we wrote (a literal of the source, or a quoted name).
    case text(String)
    /// A value, bound as a parameter.
    case value(SQLValue)
    /// A parameter whose value each run gives by name (`values(_:)`): a statement rendered and
    /// prepared once, run for many rows.
    case named(String)
  }

  private(set) var pieces: [Piece]

  init(stringLiteral text: StaticString) { pieces = [.text(text.description)] }

  init(stringInterpolation: StringInterpolation) { pieces = stringInterpolation.pieces }

  /// SQL text made by the engine's own code (never from input), such as the rules' renderers.
  init(verbatim text: String) { pieces = [.text(text)] }

  /// One bound value, alone.
  init(value: SQLValue) { pieces = [.value(value)] }

  init(pieces: [Piece]) { self.pieces = pieces }

  struct StringInterpolation: StringInterpolationProtocol {
    fileprivate var pieces: [Piece] = []

    init(literalCapacity: Int, interpolationCount: Int) {
      pieces.reserveCapacity(interpolationCount * 2 + 1)
    }

    mutating func appendLiteral(_ literal: StaticString) { text(literal.description) }

    /// A value: a parameter.
    mutating func appendInterpolation(_ value: SQLValue) { pieces.append(.value(value)) }
    mutating func appendInterpolation(_ text: String) { pieces.append(.value(.text(text))) }
    mutating func appendInterpolation(_ number: Int64) { pieces.append(.value(.integer(number))) }
    mutating func appendInterpolation(_ number: Int) {
      pieces.append(.value(.integer(Int64(number))))
    }

    /// A parameter given its value by name at each run (`values(_:)`).
    mutating func appendInterpolation(named name: String) { pieces.append(.named(name)) }

    /// A fragment built as SQL, its values still bound.
    mutating func appendInterpolation(sql fragment: SQL) { pieces += fragment.pieces }

    /// An identifier, double-quoted (quotes inside doubled), the same in both dialects.
    mutating func appendInterpolation(column name: String) { text(SQL.quotedName(name)) }

    /// A string literal, single-quoted (quotes inside doubled). For names the planner must see
    /// (a class for its partial indexes, a JSON path an expression index was made with).
    mutating func appendInterpolation(literal value: String) { text(SQL.quotedLiteral(value)) }

    private mutating func text(_ text: String) {
      guard !text.isEmpty else { return }
      pieces.appendText(text)
    }
  }

  var isEmpty: Bool { pieces.allSatisfy { $0 == .text("") } }

  /// The values, in the order their parameters appear (a named one is NULL: see `values(_:)`).
  var values: [SQLValue] { values([:]) }

  /// The values in parameter order, each named parameter's taken from `named` (NULL if absent).
  /// (Pairs, not a dictionary: a run's few names are found faster than they would be hashed.)
  func values(_ named: KeyValuePairs<String, SQLValue>) -> [SQLValue] {
    pieces.compactMap {
      switch $0 {
      case .text: return nil
      case .value(let value): return value
      case .named(let name): return named.first { $0.key == name }?.value ?? .null
      }
    }
  }

  static func + (left: SQL, right: SQL) -> SQL {
    var joined = left
    joined.append(right)
    return joined
  }

  mutating func append(_ other: SQL) {
    guard case .text(let first)? = other.pieces.first else {
      pieces += other.pieces
      return
    }
    pieces.appendText(first)
    pieces += other.pieces.dropFirst()
  }

  /// (Names and literals rarely hold a quote: `replacing` is taken only when one does, as it
  /// costs some 10,000 instructions a call, which `list` paid 80 times for its unread counts.)
  static func quotedName(_ name: String) -> String {
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacing("\"", with: "\"\"") + "\""
  }

  /// Both engines read `''` as one quote and nothing else as special (PostgreSQL's
  /// `standard_conforming_strings`, on by default since 9.1 and set by the engine's connection).
  static func quotedLiteral(_ value: String) -> String {
    guard value.utf8.contains(UInt8(ascii: "'")) else { return "'" + value + "'" }
    return "'" + value.replacing("'", with: "''") + "'"
  }

  /// The statement's text in `dialect` and its values in parameter order.
  func rendered(_ dialect: SQLDialect) -> (sql: String, values: [SQLValue]) {
    // Room made once, and the text's bytes copied into it: a statement of a thousand bytes
    // grown append by append was copied at each doubling (8,000 instructions a query of a
    // comment's thread lookup), and appending text to text cost 1,000 instructions a piece.
    var length = 0
    var count = 0
    for piece in pieces {
      if case .text(let part) = piece { length += part.utf8.count } else { count += 1 }
    }
    var values: [SQLValue] = []
    values.reserveCapacity(count)
    // `?`, or `$` and at most as many digits as the count has.
    let capacity = length + count * (dialect == .sqlite ? 1 : 1 + String(count).utf8.count)
    let text = String(unsafeUninitializedCapacity: capacity) { buffer in
      var at = 0
      func add(_ part: String) {
        var part = part
        part.withUTF8 { bytes in
          precondition(bytes.count <= capacity - at, "SQL rendered past its counted length")
          if let from = bytes.baseAddress {
            (buffer.baseAddress! + at).update(from: from, count: bytes.count)
          }
          at += bytes.count
        }
      }
      for piece in pieces {
        switch piece {
        case .text(let part): add(part)
        case .value, .named:
          values.append(piece.value)
          switch dialect {
          case .sqlite: add("?")
          case .postgres: add("$\(values.count)")
          }
        }
      }
      return at
    }
    return (text, values)
  }
}

extension [SQL.Piece] {
  /// `text` added to the last piece when it is text, else as a piece of its own. The last
  /// piece's string is taken out of the array before it grows, so that it is grown in place:
  /// replacing it with `before + text` copied the whole statement at every literal and made
  /// building a long one quadratic.
  fileprivate mutating func appendText(_ text: String) {
    guard case .text(var before)? = last else {
      append(.text(text))
      return
    }
    removeLast()
    before += text
    append(.text(before))
  }
}

extension SQL.Piece {
  fileprivate var value: SQLValue {
    if case .value(let value) = self { return value }
    return .null
  }
}

extension SQL {
  /// The fragments joined by `separator` (text of ours, such as `" AND "`).
  static func joined(_ parts: [SQL], separator: StaticString) -> SQL {
    var joined = SQL(verbatim: "")
    for (index, part) in parts.enumerated() {
      if index > 0 { joined.append(SQL(verbatim: separator.description)) }
      joined.append(part)
    }
    return joined
  }

  /// `parts` joined by `separator` (` OR `, ` AND `) in parentheses nested as a balanced tree:
  /// a flat chain of a thousand terms is an expression a thousand deep, past SQLite's limit
  /// (`SQLITE_MAX_EXPR_DEPTH`), while the tree is ten deep.
  static func balanced(_ parts: [SQL], separator: StaticString) -> SQL {
    guard parts.count > 16 else { return "(\(sql: joined(parts, separator: separator)))" }
    let half = parts.count / 2
    let halves = [
      balanced(Array(parts[..<half]), separator: separator),
      balanced(Array(parts[half...]), separator: separator),
    ]
    return "(\(sql: joined(halves, separator: separator)))"
  }
}

/// Where a statement will run: how its parameters are written.
enum SQLDialect: Sendable {
  /// `?`, bound in order.
  case sqlite
  /// `$1`, `$2`…, numbered in order.
  case postgres
}
