extension PostgresEngine {
  /// The keys in the owner-only `forum.secrets`, through `forum.application_keys`: the board's
  /// owner reads, makes and rotates them, a server role reads and makes them, a member is refused.
  func applicationKeys(create: Bool, rotate: Bool) throws -> ApplicationKeys? {
    func read() throws -> PostgresResult {
      try run(
        "SELECT * FROM forum.application_keys($1::boolean, $2::boolean)",
        [.text(create ? "true" : "false"), .text(rotate ? "true" : "false")])
    }
    // Only making them needs a transaction (it holds a lock to the commit).
    let result = create || rotate ? try write(read) : try read()
    guard result.rowCount == 1, let application = result.text(0, 0),
      let client = result.text(0, 1)
    else { return nil }
    return ApplicationKeys(applicationKey: application, clientKey: client)
  }
}
