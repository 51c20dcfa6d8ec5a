import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// A fresh directory under the system's temporary directory; `remove()` deletes it and all in it.
struct TemporaryDirectory {
  let path: String

  init() throws {
    let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
    var template = Array(base.appendingPathComponent("DatastoreTests.XXXXXX").path.utf8CString)
    guard let created = mkdtemp(&template) else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
    path = String(cString: created)
  }

  /// A path inside the directory.
  func file(_ name: String) -> String { path + "/" + name }

  func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs `body` with a fresh temporary directory that is removed afterwards, whatever happens.
func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
  let directory = try TemporaryDirectory()
  defer { directory.remove() }
  return try body(directory)
}

/// Expects `body` to throw a `DatastoreError` with `code`, and returns it for further checks.
@discardableResult
func expectError<T>(
  _ code: ErrorCode, _ comment: Comment? = nil,
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> DatastoreError? {
  do {
    let value = try body()
    Issue.record(
      "expected \(code.rawValue) but got \(value)\(comment.map { " — \($0)" } ?? "")",
      sourceLocation: sourceLocation)
  } catch let error as DatastoreError {
    #expect(
      error.code == code, "\(error)\(comment.map { " — \($0)" } ?? "")",
      sourceLocation: sourceLocation)
    return error
  } catch {
    Issue.record(
      "expected DatastoreError \(code.rawValue) but got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}

/// The bytes of a file, or nil when it cannot be read.
func contents(of path: String) -> [UInt8]? {
  FileManager.default.contents(atPath: path).map { Array($0) }
}

/// The permission bits of a file, or nil when it does not exist.
func mode(of path: String) -> mode_t? {
  var info = stat()
  guard stat(path, &info) == 0 else { return nil }
  return info.st_mode & 0o7777
}

/// Every row the datastore keeps, as text: equal fingerprints mean nothing was written.
func fingerprint(_ store: Datastore) throws -> [String] {
  try SQLiteFixture.fingerprint(store.location)
}

/// How many rows a table has, read directly.
func rowCount(_ store: Datastore, _ table: String) throws -> Int64 {
  let storage = try #require(store.engine as? SQLiteEngine)
  return try storage.connection.prepare("SELECT count(*) FROM \(table)").firstRow { $0.int(0) }
    ?? -1
}
