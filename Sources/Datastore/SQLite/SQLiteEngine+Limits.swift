/// The board's storage bound per member (`mod storage-per-member`), kept in `meta` as
/// `memberStorageBytes`. On SQLite it bounds what app users store through `forum serve` (with
/// its `--storage-per-user`, the smaller counts); whoever holds the file is trusted with it.
extension SQLiteEngine {
  static let memberStorageKey = "memberStorageBytes"

  func memberStorageBytes(as caller: Principals) throws -> Int? {
    try guarded {
      try connection.firstRow(
        "SELECT value FROM meta WHERE key = \(SQLiteEngine.memberStorageKey)"
      ) { try $0.text(0) }
    }.flatMap { $0.flatMap { Int($0) } }
  }

  func setMemberStorageBytes(_ bytes: Int?, as caller: Principals) throws {
    guard try isBoardOwner(caller) else { throw DatastoreError.noAccess }
    try guarded {
      try connection.transaction {
        if let bytes {
          try connection.run(
            sql: """
              INSERT OR REPLACE INTO meta(key, value)
              VALUES (\(SQLiteEngine.memberStorageKey), \(String(bytes)))
              """)
        } else {
          try connection.run(sql: "DELETE FROM meta WHERE key = \(SQLiteEngine.memberStorageKey)")
        }
      }
    }
  }
}
