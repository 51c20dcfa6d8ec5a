/// An append-only list of schema steps; `PRAGMA user_version` records how many have run.
/// Never edit a step that has shipped: add a new one.
struct Migrations: Sendable {
  /// One step: SQL, or Swift for what SQL alone cannot do (hashing old secrets).
  enum Step: Sendable {
    case sql(String)
    case swift(@Sendable (Connection) throws -> Void)
  }

  let steps: [Step]

  /// Brings the database up to date inside one immediate transaction, so two processes opening a
  /// fresh file at once cannot both run a step. Returns the version the file had before.
  func apply(to connection: Connection) throws -> Int {
    // The common case, an up-to-date file, needs no write lock.
    let before = try version(of: connection)
    if before == steps.count { return before }
    return try connection.transaction {
      let current = try version(of: connection)
      guard current <= steps.count else {
        throw DatastoreError(
          .systemError,
          reason: BoardAccessReason.newerSchema(path: connection.path, version: current))
      }
      for index in current..<steps.count {
        switch steps[index] {
        case .sql(let sql): try connection.execute(sql)
        case .swift(let body): try body(connection)
        }
        try connection.execute("PRAGMA user_version = \(index + 1)")
      }
      return current
    }
  }

  func version(of connection: Connection) throws -> Int {
    Int(try connection.prepare("PRAGMA user_version").firstRow { $0.int(0) } ?? 0)
  }
}
