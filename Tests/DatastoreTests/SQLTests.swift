import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// `SQL`: interpolated values are parameters in both dialects, names and literals are quoted,
/// fragments keep their values; and a hostile `where` stays values on both engines.
@Suite("SQL that binds values")
struct SQLTests {
  /// Strings an attacker would try: quotes, comments, both engines' placeholders.
  static let hostile = [
    "x'; DROP TABLE objects; --", "$1", "?", "?1", "$2::jsonb", "\" OR 1=1 --", "a\\'b",
    "') OR ('1'='1",
  ]

  @Test func valuesAreParameters() {
    let name = Self.hostile[0]
    let sql: SQL = "SELECT a FROM t WHERE a = \(name) AND b > \(Int64(3)) AND c = \(.real(1.5))"
    let sqlite = sql.rendered(.sqlite)
    #expect(sqlite.sql == "SELECT a FROM t WHERE a = ? AND b > ? AND c = ?")
    #expect(sqlite.values == [.text(name), .integer(3), .real(1.5)])
    let postgres = sql.rendered(.postgres)
    #expect(postgres.sql == "SELECT a FROM t WHERE a = $1 AND b > $2 AND c = $3")
    #expect(postgres.values == sqlite.values)
    #expect(!postgres.sql.contains("DROP"))
  }

  /// A statement rendered into room counted beforehand (`rendered`) is the text and
  /// placeholders appended one by one, for any mix of text (multi-byte too) and parameters,
  /// past ten thousand parameters on PostgreSQL.
  @Test func renderingIsThePiecesInOrder() {
    var generator = SystemRandomNumberGenerator()
    let texts = [
      "", "a", "SELECT ", " = ", "'日本語' ", "é\u{301} 🧵 ", String(repeating: "x", count: 999),
    ]
    for size in [0, 1, 2, 9, 10, 11, 99, 100, 101, 12_000] {
      var pieces: [SQL.Piece] = []
      var sqlite = ""
      var postgres = ""
      var values: [SQLValue] = []
      for index in 0..<size {
        if Bool.random(using: &generator) {
          let text = texts.randomElement(using: &generator)!
          pieces.append(.text(text))
          sqlite += text
          postgres += text
        } else {
          values.append(.integer(Int64(index)))
          pieces.append(.value(.integer(Int64(index))))
          sqlite += "?"
          postgres += "$\(values.count)"
        }
      }
      let sql = SQL(pieces: pieces)
      #expect(sql.rendered(.sqlite).sql == sqlite)
      #expect(sql.rendered(.postgres).sql == postgres)
      #expect(sql.rendered(.sqlite).values == values)
      #expect(sql.rendered(.postgres).values == values)
    }
  }

  @Test func fragmentsKeepTheirValuesInOrder() {
    let term: SQL = "x = \(1)"
    let both: SQL = "\(sql: term) OR \(sql: term) OR y = \("two")"
    #expect(both.rendered(.postgres).sql == "x = $1 OR x = $2 OR y = $3")
    #expect(both.rendered(.postgres).values == [.integer(1), .integer(1), .text("two")])
    #expect(both.rendered(.sqlite).sql == "x = ? OR x = ? OR y = ?")
    #expect(both.postgres.values == [.text("1"), .text("1"), .text("two")])
    let joined = SQL.joined([term, "z IS NULL", term], separator: " AND ")
    #expect(joined.rendered(.postgres).sql == "x = $1 AND z IS NULL AND x = $2")
    #expect((term + " LIMIT \(10)").rendered(.sqlite).sql == "x = ? LIMIT ?")
  }

  /// A statement run for many rows is rendered once; each run gives its named values.
  @Test func namedParametersTakeEachRunsValues() {
    let sql: SQL = "SELECT 1 FROM t WHERE a = \(named: "a") AND b = \(2) AND c = \(named: "c")"
    #expect(sql.rendered(.sqlite).sql == "SELECT 1 FROM t WHERE a = ? AND b = ? AND c = ?")
    #expect(sql.rendered(.postgres).sql == "SELECT 1 FROM t WHERE a = $1 AND b = $2 AND c = $3")
    #expect(
      sql.values(["c": .text("x"), "a": .integer(1)]) == [.integer(1), .integer(2), .text("x")])
    #expect(sql.values(["a": .integer(1)]) == [.integer(1), .integer(2), .null])
  }

  @Test func namesAndLiteralsAreQuoted() {
    let sql: SQL = """
      SELECT \(column: "key_number"), \(column: "a\"b") FROM t \
      WHERE class = \(literal: "Thread") AND path = \(literal: "it's")
      """
    #expect(
      sql.rendered(.postgres).sql
        == "SELECT \"key_number\", \"a\"\"b\" FROM t WHERE class = 'Thread' AND path = 'it''s'")
    #expect(sql.values.isEmpty)
  }

  /// A hostile value really is a value: SQLite stores and finds it, and runs nothing of it.
  @Test func aHostileValueStaysAValueInSQLite() throws {
    let directory = try makeTemporaryDirectory("sql-bind")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let connection = try Connection(path: directory + "/t.db")
    try connection.execute("CREATE TABLE t(a TEXT, n INTEGER)")
    for (index, text) in Self.hostile.enumerated() {
      let (sql, values) = ("INSERT INTO t(a, n) VALUES (\(text), \(index))" as SQL).rendered(
        .sqlite)
      try connection.run(sql, values)
    }
    for (index, text) in Self.hostile.enumerated() {
      let (sql, values) = ("SELECT n FROM t WHERE a = \(text)" as SQL).rendered(.sqlite)
      #expect(try connection.prepare(sql).rows(values) { $0.int(0) } == [Int64(index)], "\(text)")
    }
    let (sql, values) = ("SELECT count(*) FROM t" as SQL).rendered(.sqlite)
    #expect(try connection.prepare(sql).firstRow(values) { $0.int(0) } == Int64(Self.hostile.count))
  }

  /// Through the datastore on both engines: a `where` whose strings are hostile finds exactly
  /// the rows holding them; a hostile field name is refused before any engine sees it, and,
  /// given to the engine directly, is a quoted path that matches nothing and changes nothing.
  @Test(arguments: EngineFixtures.all)
  func aHostileWhereStaysValues(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase()
    let store = try Datastore.open(try database.location(as: "alice"))
    let login = try store.loginAnonymously(secret: Datastore.newSecret())
    let alice = store.client(login)
    var ids: [String: String] = [:]
    for text in Self.hostile {
      let object = try alice.create(
        "Item", fields: ["v": .string(text)], acl: .publicRead(owner: login.user.objectId))
      ids[text] = object.objectId
    }
    func found(_ conditions: [QueryCondition], equalTo: [String: JSONValue] = [:]) throws
      -> [String]
    {
      var query = Query(className: "Item", equalTo: equalTo, limit: 100)
      query.conditions = conditions
      #expect(try alice.count(query) == alice.find(query).count)
      return try alice.find(query).map(\.objectId)
    }
    for text in Self.hostile {
      #expect(try found([.equal("v", .string(text))]) == [ids[text]!], "\(text)")
      #expect(try found([], equalTo: ["v": .string(text)]) == [ids[text]!], "\(text)")
      #expect(try found([.isIn("v", [.string(text), .string("none")])]) == [ids[text]!])
      #expect(try found([.notEqual("v", .string(text))]).count == Self.hostile.count - 1)
      #expect(try found([.compare("v", .greaterThanOrEqual, .string(text))]).contains(ids[text]!))
    }
    let before = try database.fingerprint()
    for name in ["v') OR 1=1 --", "v'", "$1", "v\"", "v;DROP"] {
      var query = Query(className: "Item", limit: 100)
      query.conditions = [.notEqual(name, .string("x"))]
      #expect(throws: DatastoreError.invalid("where")) { try alice.find(query) }
      // The engine itself, past the client's check: the name is a quoted path, never SQL.
      let engineQuery = Query(className: "Item", limit: 100)
      var direct = engineQuery
      direct.conditions = [.equal(name, .string("x"))]
      let rows = try? store.engine.find(direct, as: Principals(userId: login.user.objectId))
      #expect(rows?.isEmpty ?? true, "\(name)")
      direct.order = [name]
      let ordered = try? store.engine.find(direct, as: Principals(userId: login.user.objectId))
      #expect(ordered?.isEmpty ?? true, "\(name)")
    }
    #expect(try database.fingerprint() == before)
  }
  /// The engine itself, past the client's checks: a class name is a quoted literal in every
  /// statement (PostgreSQL's update and get once wrote it into the text unquoted, so a quote
  /// in it reached every row the caller could write), and a field name with a quote is a key.
  @Test(arguments: EngineFixtures.all)
  func hostileNamesGivenToTheEngineStayLiterals(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase()
    let store = try Datastore.open(try database.location(as: "alice"))
    let login = try store.loginAnonymously(secret: Datastore.newSecret())
    let alice = store.client(login)
    let me = Principals(userId: login.user.objectId)
    let item = try alice.create(
      "Item", fields: ["v": .string("x")], acl: .publicRead(owner: login.user.objectId))
    let hostile = "Item' OR 'a' = 'a"
    #expect(throws: DatastoreError.notFound) {
      try store.engine.get(hostile, objectId: item.objectId, as: me)
    }
    let before = try database.fingerprint()
    _ = try? store.engine.update(
      hostile, objectId: item.objectId, set: ["v": .string("changed")], increment: [:], acl: nil,
      as: me)
    _ = try? store.engine.delete(hostile, objectId: item.objectId, as: me)
    #expect(try database.fingerprint() == before)
    let counted = try store.engine.update(
      "Item", objectId: item.objectId, set: [:], increment: ["a'b": 2], acl: nil, as: me)
    #expect(counted.fields["a'b"] == .int(2))
    #expect(counted.fields["v"] == .string("x"))
  }
}
