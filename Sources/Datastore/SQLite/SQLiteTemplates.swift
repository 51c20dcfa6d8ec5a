/// Statements SQLite keeps once built, for a shape of write or query: building their SQL was
/// a tenth of a comment's work (BENCHMARKS W18–W19). Each is kept per caller (what the caller
/// may read is part of the text) and emptied when the rules change (`SQLiteEngine.rules`).

/// An INSERT built once (`SQLiteEngine.insertTemplate`): its text, and where each of its values
/// comes from.
struct InsertTemplate {
  /// What each row brings of its own.
  enum Slot: String {
    case objectId, readers, writers, data, parentId
  }
  enum Value {
    case constant(SQLValue)
    case slot(Slot)
  }
  let sql: String
  let values: [Value]

  /// `statement`'s text; its values, the named ones as the row's own slots.
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

/// The shape of a query (`SQLiteEngine.findStatement`): what decides its SQL's text, and the
/// values it binds, in an order fixed by the shape. Built from a query with none of what a
/// shape cannot say (conditions, a nearest point, unread only): those are built each time.
struct FindShape {
  /// The text's inputs: the class, the fields and the kind of each value, the order, whether
  /// the page skips, and how many principals the caller has (or the master key). Not who the
  /// caller is: a server's callers are many, their names are values like the query's own.
  let key: String
  /// The query's own values and the caller's principals, in the shape's order.
  let values: [SQLValue]
  /// What stands for each value in `probe` (the same order): no query's own value.
  let markers: [SQLValue]
  /// The query with markers for its values, and a caller with markers for its principals:
  /// built once, their SQL says where each value goes.
  let probe: Query
  let probeCaller: Principals

  init?(_ query: Query, _ caller: Principals) {
    guard query.conditions.isEmpty, query.nearest == nil, !query.unreadOnly else { return nil }
    var key = [query.className]
    var values: [SQLValue] = []
    var markers: [SQLValue] = []
    var probe = query
    func number(_ value: Int64) -> Int64 {
      values.append(.integer(value))
      markers.append(.integer(FindShape.markerNumber(markers.count)))
      return FindShape.markerNumber(markers.count - 1)
    }
    func text(_ value: String) -> String {
      values.append(.text(value))
      let marker = "\u{1}slot \(markers.count)\u{1}"
      markers.append(.text(marker))
      return marker
    }
    for field in query.equalTo.keys.sorted() {
      let value = query.equalTo[field]!
      let kind: String
      switch value {
      case .null: kind = "null"
      case .bool(let flag): kind = flag ? "true" : "false"
      case .int(let own):
        kind = "int"
        probe.equalTo[field] = .int(number(own))
      case .double(let own):
        kind = "double"
        values.append(.real(own))
        let marker = Double(FindShape.markerNumber(markers.count))
        markers.append(.real(marker))
        probe.equalTo[field] = .double(marker)
      case .string(let own):
        kind = "string"
        probe.equalTo[field] = .string(text(own))
      case .array, .object:
        // Bound as its compact JSON (`SQLiteLeaves.equalTo`, `seekTerm`).
        kind = "json"
        let marker = JSONValue.array([.string("\u{1}slot \(markers.count)\u{1}")])
        values.append(.text(value.jsonText()))
        markers.append(.text(marker.jsonText()))
        probe.equalTo[field] = marker
      }
      key.append("=" + field + ":" + kind)
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
      let names = caller.names.subtracting(["*"]).sorted()
      key.append("principals \(names.count)")
      let probeNames = names.indices.map { "\u{1}principal \($0)\u{1}" }
      probeCaller = Principals(
        userId: probeNames.first, roles: probeNames.dropFirst().map { $0 })
      let probeSorted = probeCaller.names.subtracting(["*"]).sorted()
      values += names.map(SQLValue.text)
      markers += probeSorted.map(SQLValue.text)
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

  /// From the probe's SQL (`FindShape.probe`): each of `markers` found there is a slot.
  init(probe statement: SQL, markers: [SQLValue]) {
    parts = statement.pieces.map { piece in
      if case .value(let value) = piece, let slot = markers.firstIndex(of: value) {
        return .slot(slot)
      }
      return .piece(piece)
    }
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
