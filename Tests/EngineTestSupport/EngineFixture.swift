import Datastore
import Foundation

/// One engine the Datastore and Board suites run against. Adding an engine to every suite is one
/// line in `EngineFixtures.all`.
public protocol EngineFixture: Sendable, CustomStringConvertible {
  /// A fresh, empty database for one test; removed when the value goes away.
  func makeDatabase() throws -> TestDatabase
}

/// The engines the suites are parameterized over.
public enum EngineFixtures {
  public static let all: [any EngineFixture] = [SQLiteFixture()]
}

/// A database made for one test.
public final class TestDatabase: @unchecked Sendable {
  /// The engine's name, for failure messages.
  public let engine: String
  /// Where the database's owner connects (SQLite: the path). Tests read what they must check
  /// through it, past every ACL.
  public let ownerLocation: String
  private let locationFor: @Sendable (String) throws -> String
  private let fingerprintRows: @Sendable () throws -> [String]
  private let remove: @Sendable () -> Void

  public init(
    engine: String, ownerLocation: String,
    location: @escaping @Sendable (String) throws -> String,
    fingerprint: @escaping @Sendable () throws -> [String], remove: @escaping @Sendable () -> Void
  ) {
    self.engine = engine
    self.ownerLocation = ownerLocation
    self.locationFor = location
    self.fingerprintRows = fingerprint
    self.remove = remove
  }

  deinit { remove() }

  /// Where `person` connects: on SQLite everyone opens the same file (and is told apart by their
  /// profile); on a server each person is their own database role.
  public func location(as person: String) throws -> String { try locationFor(person) }

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

  public func makeDatabase() throws -> TestDatabase {
    let directory = try makeTemporaryDirectory("EngineTests")
    let path = directory + "/board.sqlite"
    return TestDatabase(
      engine: description, ownerLocation: path, location: { _ in path },
      fingerprint: { try SQLiteFixture.fingerprint(path) },
      remove: { try? FileManager.default.removeItem(atPath: directory) })
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
