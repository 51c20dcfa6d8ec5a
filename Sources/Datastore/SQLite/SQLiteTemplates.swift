/// Statements SQLite keeps once built, for a shape of write or query: building their SQL was
/// a tenth of a comment's work (BENCHMARKS W18–W19). Each is kept per caller (what the caller
/// may read is part of the text) and emptied when the rules change (`SQLiteEngine.rules`).

/// An INSERT built once (`SQLiteEngine.insertTemplate`): its text, and where each of its values
/// comes from; for a child, the SELECT of its parent's row it is made from.
struct InsertTemplate {
  /// What each row brings of its own, and (`parentRow`) the rowid of its parent's row.
  enum Slot: String {
    case objectId, readers, writers, data, parentId, parentRow
  }
  enum Value {
    case constant(SQLValue)
    case slot(Slot)
  }
  /// A statement's text and where each of its values comes from.
  struct Statement {
    let sql: String
    let values: [Value]

    /// `statement`'s text; its values, the named ones as slots.
    init(_ statement: SQL) {
      sql = statement.rendered(.sqlite).sql
      values = statement.pieces.compactMap { piece in
        switch piece {
        case .text: nil
        case .value(let value): .constant(value)
        case .named(let name):
          .slot(Slot(rawValue: name) ?? { preconditionFailure("no slot \(name)") }())
        }
      }
    }
  }
  /// The INSERT … VALUES of the row.
  let insert: Statement
  /// A child's parent, readable by the caller: its rowid (the `parentRow` slot of `insert`),
  /// or no row.
  let parent: Statement?
}

/// The shape of a query (`SQLiteEngine.findStatement`): what decides its SQL's text, and the
/// values it binds, in an order fixed by the shape. Built from a query with none of what a
/// shape cannot say (conditions but equalities, a nearest point, unread only): those are
/// built each time.
struct FindShape {
  /// The text's inputs: the class, the fields and the kind of each value, the order, whether
  /// the page skips, and how many principals the caller has (or the master key). Not who the
  /// caller is: a server's callers are many, their names are values like the query's own.
  let key: String
  /// The query's own values and the caller's principals, in the shape's order.
  let values: [SQLValue]
  /// What stands for each value in `probe` (the same order): no query's own value. Empty
  /// unless the shape was made `probing` (only a shape not yet kept needs them).
  let markers: [SQLValue]
  /// The query with markers for its values, and a caller with markers for its principals:
  /// built once, their SQL says where each value goes.
  let probe: Query
  let probeCaller: Principals

  init?(_ query: Query, _ caller: Principals, probing: Bool = false) {
    guard query.nearest == nil, !query.unreadOnly else { return nil }
    var key = [query.className]
    var values: [SQLValue] = []
    var markers: [SQLValue] = []
    var probe = query
    // Each value's marker is its slot number (`markerNumber`), made only when probing.
    func number(_ value: Int64) -> Int64 {
      values.append(.integer(value))
      guard probing else { return value }
      markers.append(.integer(FindShape.markerNumber(markers.count)))
      return FindShape.markerNumber(markers.count - 1)
    }
    func text(_ value: String) -> String {
      values.append(.text(value))
      guard probing else { return value }
      let marker = "\u{1}slot \(markers.count)\u{1}"
      markers.append(.text(marker))
      return marker
    }
    // A value of the query's own: its kind (part of the key) and, probing, its marker. An
    // array or object is bound as its compact JSON (`SQLiteLeaves.equalTo`, `seekTerm`).
    func slot(_ value: JSONValue) -> (kind: String, marker: JSONValue?) {
      switch value {
      case .null: return ("null", nil)
      case .bool(let flag): return (flag ? "true" : "false", nil)
      case .int(let own): return ("int", .int(number(own)))
      case .double(let own):
        values.append(.real(own))
        guard probing else { return ("double", nil) }
        let marker = Double(FindShape.markerNumber(markers.count))
        markers.append(.real(marker))
        return ("double", .double(marker))
      case .string(let own): return ("string", .string(text(own)))
      case .array, .object:
        let isArray: Bool
        if case .array = value { isArray = true } else { isArray = false }
        values.append(.text(value.jsonText()))
        guard probing else { return (isArray ? "array" : "object", nil) }
        let name = JSONValue.string("\u{1}slot \(markers.count)\u{1}")
        let marker: JSONValue = isArray ? .array([name]) : .object(["\u{1}": name])
        markers.append(.text(marker.jsonText()))
        return (isArray ? "array" : "object", marker)
      }
    }
    for field in query.equalTo.keys.sorted() {
      let (kind, marker) = slot(query.equalTo[field]!)
      if probing, let marker { probe.equalTo[field] = marker }
      key.append("=" + field + ":" + kind)
    }
    // A `where` of fields (what the server makes of one: each an equality, in its order);
    // another condition makes a shape of its own too many ways to key.
    for (index, condition) in query.conditions.enumerated() {
      guard case .equal(let field, let value) = condition else { return nil }
      let (kind, marker) = slot(value)
      if probing, let marker { probe.conditions[index] = .equal(field, marker) }
      key.append("?" + field + ":" + kind)
    }
    for field in query.greaterThan.keys.sorted() {
      probe.greaterThan[field] = number(query.greaterThan[field]!)
      key.append(">" + field)
    }
    for field in query.lessThan.keys.sorted() {
      probe.lessThan[field] = number(query.lessThan[field]!)
      key.append("<" + field)
    }
    key.append("order " + query.order.joined(separator: ","))
    probe.limit = Int(number(Int64(query.limit)))
    if query.skip > 0 {
      key.append("skips")
      probe.skip = Int(number(Int64(query.skip)))
    }
    if caller.isMaster {
      key.append("master")
      probeCaller = .master
    } else {
      // Each principal but `*` (every caller's) is a value: the i-th in order is the probe's
      // i-th in order, whatever either's names are.
      var names = caller.names
      names.remove("*")
      let sorted = names.sorted()
      key.append("principals \(sorted.count)")
      values += sorted.map(SQLValue.text)
      if probing {
        let probeNames = sorted.indices.map { "\u{1}principal \($0)\u{1}" }
        probeCaller = Principals(
          userId: probeNames.first, roles: probeNames.dropFirst().map { $0 })
        let probeSorted = probeCaller.names.subtracting(["*"]).sorted()
        markers += probeSorted.map(SQLValue.text)
      } else {
        probeCaller = caller
      }
    }
    self.key = key.joined(separator: "\u{0}")
    self.values = values
    self.markers = markers
    self.probe = probe
  }

  /// Markers no query's own value is, by slot. Positive (a page's skip decides the statement's
  /// form by its sign), and exact as a double.
  static func markerNumber(_ slot: Int) -> Int64 { 7_700_000_000_000_000 + Int64(slot) }
}

/// A query's SQL built once for its shape (`FindShape`): its pieces, each value either fixed
/// by the shape or one of the query's own.
struct FindTemplate {
  enum Part {
    case piece(SQL.Piece)
    case slot(Int)
  }
  let parts: [Part]

  /// From the probe's SQL (`FindShape.probe`): each of `markers` found there is a slot. Text
  /// pieces side by side are joined: each piece is a step of each rendering.
  init(probe statement: SQL, markers: [SQLValue]) {
    var parts: [Part] = []
    for piece in statement.pieces {
      if case .value(let value) = piece, let slot = markers.firstIndex(of: value) {
        parts.append(.slot(slot))
      } else if case .text(let more) = piece, case .piece(.text(let text))? = parts.last {
        parts[parts.count - 1] = .piece(.text(text + more))
      } else {
        parts.append(.piece(piece))
      }
    }
    self.parts = parts
  }

  /// The SQL with the query's own `values`.
  func filled(_ values: [SQLValue]) -> SQL {
    SQL(
      pieces: parts.map {
        switch $0 {
        case .piece(let piece): piece
        case .slot(let slot): .value(values[slot])
        }
      })
  }
}
