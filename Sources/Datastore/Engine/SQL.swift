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
  }

  private(set) var pieces: [Piece]

  init(stringLiteral text: StaticString) { pieces = [.text(text.description)] }

  init(stringInterpolation: StringInterpolation) { pieces = stringInterpolation.pieces }

  /// SQL text made by the engine's own code (never from input), such as the rules' renderers.
  init(verbatim text: String) { pieces = [.text(text)] }

  /// One bound value, alone.
  init(value: SQLValue) { pieces = [.value(value)] }

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

    /// A fragment built as SQL, its values still bound.
    mutating func appendInterpolation(sql fragment: SQL) { pieces += fragment.pieces }

    /// An identifier, double-quoted (quotes inside doubled), the same in both dialects.
    mutating func appendInterpolation(column name: String) { text(SQL.quotedName(name)) }

    /// A string literal, single-quoted (quotes inside doubled). For names the planner must see
    /// (a class for its partial indexes, a JSON path an expression index was made with).
    mutating func appendInterpolation(literal value: String) { text(SQL.quotedLiteral(value)) }

    private mutating func text(_ text: String) {
      guard !text.isEmpty else { return }
      if case .text(let before)? = pieces.last {
        pieces[pieces.count - 1] = .text(before + text)
      } else {
        pieces.append(.text(text))
      }
    }
  }

  var isEmpty: Bool { pieces.allSatisfy { $0 == .text("") } }

  /// The values, in the order their parameters appear.
  var values: [SQLValue] {
    pieces.compactMap {
      if case .value(let value) = $0 { return value }
      return nil
    }
  }

  static func + (left: SQL, right: SQL) -> SQL {
    var joined = left
    joined.append(right)
    return joined
  }

  mutating func append(_ other: SQL) {
    guard case .text(let first)? = other.pieces.first, case .text(let last)? = pieces.last else {
      pieces += other.pieces
      return
    }
    pieces[pieces.count - 1] = .text(last + first)
    pieces += other.pieces.dropFirst()
  }

  static func quotedName(_ name: String) -> String {
    "\"" + name.replacing("\"", with: "\"\"") + "\""
  }

  /// Both engines read `''` as one quote and nothing else as special (PostgreSQL's
  /// `standard_conforming_strings`, on by default since 9.1 and set by the engine's connection).
  static func quotedLiteral(_ value: String) -> String {
    "'" + value.replacing("'", with: "''") + "'"
  }

  /// The statement's text in `dialect` and its values in parameter order. `after` parameters
  /// are already bound before this SQL's (a fragment placed into a statement written by hand).
  func rendered(_ dialect: SQLDialect, after: Int = 0) -> (sql: String, values: [SQLValue]) {
    var text = ""
    var values: [SQLValue] = []
    for piece in pieces {
      switch piece {
      case .text(let part): text += part
      case .value(let value):
        values.append(value)
        switch dialect {
        case .sqlite: text += "?"
        case .postgres: text += "$\(after + values.count)"
        }
      }
    }
    return (text, values)
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
}

/// Where a statement will run: how its parameters are written.
enum SQLDialect: Sendable {
  /// `?`, bound in order.
  case sqlite
  /// `$1`, `$2`…, numbered in order.
  case postgres
}
