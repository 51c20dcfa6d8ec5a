import Foundation
import Testing

@testable import Datastore

extension ForumFixture {
  /// Every row the fixture's database keeps, as text: equal fingerprints mean nothing was
  /// written (the same check as the Datastore tests').
  func fingerprint() throws -> [String] {
    try fingerprint(of: [
      ("SELECT class, objectId, createDate, updateDate, readers, writers, data FROM objects", 7),
      ("SELECT name, mimeType, fileSize, hex(data) FROM files", 4),
      ("SELECT name, value FROM counters", 2),
    ])
  }

  /// The rows `queries` read (each with its number of columns), ordered, as text.
  func fingerprint(of queries: [(sql: String, columns: Int32)]) throws -> [String] {
    let store = try openStore()
    let storage = try #require(store.engine as? SQLiteEngine)
    var rows: [String] = []
    for (sql, columns) in queries {
      rows.append(sql)
      rows += try storage.connection.prepare(sql + " ORDER BY 1, 2").rows { row in
        try (0..<columns).map { try row.text($0) ?? "NULL" }.joined(separator: "|")
      }
    }
    return rows
  }
}
