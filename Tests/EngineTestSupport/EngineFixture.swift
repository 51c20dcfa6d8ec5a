import Datastore
import Foundation
import PostgresTestCluster

/// One engine the Datastore and Board suites run against. Adding an engine to every suite is one
/// line in `EngineFixtures.all`.
public protocol EngineFixture: Sendable, CustomStringConvertible {
  /// A fresh, empty database for one test, removed when the value goes away. A server engine
  /// installs `rules` and `indexes` as its owner would with `forum init`; SQLite installs them
  /// when the file is opened.
  func makeDatabase(rules: EngineRules, indexes: [IndexSpec]) throws -> TestDatabase
}

extension EngineFixture {
  /// A database without rules.
  public func makeDatabase() throws -> TestDatabase {
    try makeDatabase(rules: EngineRules(), indexes: [])
  }
}

/// The engines the suites are parameterized over.
public enum EngineFixtures {
  public static let all: [any EngineFixture] = [SQLiteFixture(), PostgresFixture()]
  /// `all` and the remote engine (a `forum serve` in this process over SQLite, and over
  /// PostgreSQL): the suites that run on all three engines.
  public static let withRemote: [any EngineFixture] =
    all + [RemoteFixture(over: SQLiteFixture()), RemoteFixture(over: PostgresFixture())]
}

/// A database made for one test.
public final class TestDatabase: @unchecked Sendable {
  /// The engine's name, for failure messages.
  public let engine: String
  /// Where the database's owner connects (SQLite: the path). Tests read what they must check
  /// through it, past every ACL.
  public let ownerLocation: String
  /// The remote engine's: the database its server holds.
  public let backing: TestDatabase?
  private let locationFor: @Sendable (String) throws -> String
  private let fingerprintRows: @Sendable () throws -> [String]
  private let remove: @Sendable () -> Void
  private let runAsOwner: @Sendable (_ sqlite: String, _ postgres: String) throws -> Void
  private let serverLocationFor: @Sendable () throws -> String

  public init(
    engine: String, ownerLocation: String,
    location: @escaping @Sendable (String) throws -> String,
    fingerprint: @escaping @Sendable () throws -> [String], remove: @escaping @Sendable () -> Void,
    execute: @escaping @Sendable (_ sqlite: String, _ postgres: String) throws -> Void = { _, _ in
    },
    serverLocation: (@Sendable () throws -> String)? = nil, backing: TestDatabase? = nil
  ) {
    self.backing = backing
    self.serverLocationFor = serverLocation ?? { ownerLocation }
    self.engine = engine
    self.ownerLocation = ownerLocation
    self.locationFor = location
    self.fingerprintRows = fingerprint
    self.remove = remove
    self.runAsOwner = execute
  }

  /// Runs SQL as the database's owner, past the API (a hand edit): `sqlite` on an SQLite file,
  /// `postgres` on a server (as the schema's owner, so the rules' bookkeeping is trusted).
  public func executeAsOwner(sqlite: String, postgres: String) throws {
    try runAsOwner(sqlite, postgres)
  }

  deinit { remove() }

  /// Where `person` connects: on SQLite everyone opens the same file (and is told apart by their
  /// profile); on a server each person is their own database role.
  public func location(as person: String) throws -> String { try locationFor(person) }

  /// Where `forum serve` connects: on SQLite the file; on a server a role granted
  /// `forum_member` and `forum_server`, which acts for the apps' users (`forum.act_as`).
  public func serverLocation() throws -> String { try serverLocationFor() }

  /// Every row the engine keeps, as text: equal fingerprints mean nothing was written.
  public func fingerprint() throws -> [String] { try fingerprintRows() }
}

/// A temporary directory that holds one test's files.
public func makeTemporaryDirectory(_ prefix: String) throws -> String {
  var template = Array((NSTemporaryDirectory() + "/\(prefix).XXXXXX").utf8CString)
  guard let created = mkdtemp(&template) else {
    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
  }
  return String(cString: created)
}

/// The embedded engine: a file in a temporary directory.
public struct SQLiteFixture: EngineFixture {
  public init() {}

  public var description: String { "SQLite" }

  public func makeDatabase(rules: EngineRules, indexes: [IndexSpec]) throws -> TestDatabase {
    let directory = try makeTemporaryDirectory("EngineTests")
    let path = directory + "/board.sqlite"
    return TestDatabase(
      engine: description, ownerLocation: path, location: { _ in path },
      fingerprint: { try SQLiteFixture.fingerprint(path) },
      remove: { try? FileManager.default.removeItem(atPath: directory) },
      execute: { sql, _ in try Connection(path: path).execute(sql) })
  }

  /// Every row of every table, read straight from the file.
  public static func fingerprint(_ path: String) throws -> [String] {
    let connection = try Connection(path: path)
    let tables = try connection.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
    ).rows { try $0.text(0) ?? "" }
    var rows: [String] = []
    for table in tables {
      rows.append("table \(table)")
      rows += try connection.prepare("SELECT * FROM \"\(table)\"").rows { row in
        (0..<row.columnCount).map { column in
          if let text = try? row.text(column) { return text }
          return row.blob(column).map { String(format: "%02x", $0) }.joined()
        }.joined(separator: "|")
      }.sorted()
    }
    return rows
  }
}

/// The server engine: a database of its own on the shared throwaway cluster, owned by a role of
/// its own; each person is a login role granted `forum_member`, made the first time it is named.
public struct PostgresFixture: EngineFixture {
  public init() {}

  public var description: String { "PostgreSQL" }

  public func makeDatabase(rules: EngineRules, indexes: [IndexSpec]) throws -> TestDatabase {
    let cluster = try PostgresTestCluster.shared()
    let board = try cluster.board(members: [])
    try Datastore.initialize(board.owner.uri, rules: rules, indexes: indexes)
    let people = PeopleRoles()
    return TestDatabase(
      engine: description, ownerLocation: board.owner.uri,
      location: { person in try people.uri(for: person, board: board) },
      fingerprint: { try PostgresFixture.fingerprint(board) },
      remove: { board.remove() },
      execute: { _, sql in
        _ = try board.cluster.admin(
          "SET ROLE \(board.owner.name); \(sql)", database: board.database)
      },
      serverLocation: { try people.serverURI(board: board) })
  }

  /// Every row of every table of the forum schema, read by the superuser (past every policy).
  public static func fingerprint(_ board: PostgresTestBoard) throws -> [String] {
    var rows: [String] = []
    for table in [
      "meta", "objects", "files", "users", "counters", "read_positions", "revisions",
      "secrets", "app_identities", "app_sessions", "private_objects",
    ] {
      rows.append("table \(table)")
      let text = try board.cluster.admin(
        "SELECT t::text FROM forum.\(table) t ORDER BY 1", database: board.database)
      rows += text.split(separator: "\n").map(String.init)
    }
    return rows
  }
}

/// The login role of each person of one test database.
private final class PeopleRoles: @unchecked Sendable {
  private let lock = NSLock()
  private var uris: [String: String] = [:]

  func uri(for person: String, board: PostgresTestBoard) throws -> String {
    lock.lock()
    defer { lock.unlock() }
    if let uri = uris[person] { return uri }
    let label = String(person.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(20))
    let role = try board.cluster.role(label.isEmpty ? "person" : label, database: board.database)
    try board.cluster.admin("GRANT forum_member TO \(role.name)")
    uris[person] = role.uri
    return role.uri
  }

  private var server: String?

  func serverURI(board: PostgresTestBoard) throws -> String {
    lock.lock()
    defer { lock.unlock() }
    if let server { return server }
    let role = try board.cluster.role("server", database: board.database)
    try board.cluster.admin("GRANT forum_member, forum_server TO \(role.name)")
    server = role.uri
    return role.uri
  }
}
