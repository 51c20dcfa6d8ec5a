extension SQLiteEngine {
  private static let applicationKeyKey = "ncmbApplicationKey"
  private static let clientKeyKey = "ncmbClientKey"

  /// The keys in `meta`; made (or replaced) in one write transaction when asked to.
  func applicationKeys(create: Bool, rotate: Bool) throws -> ApplicationKeys? {
    func read() throws -> ApplicationKeys? {
      let rows = try connection.prepare(
        "SELECT key, value FROM meta WHERE key IN (?, ?)"
      ).rows([.text(SQLiteEngine.applicationKeyKey), .text(SQLiteEngine.clientKeyKey)]) {
        (try $0.text(0) ?? "", try $0.text(1) ?? "")
      }
      let values = Dictionary(rows, uniquingKeysWith: { first, _ in first })
      guard let application = values[SQLiteEngine.applicationKeyKey],
        let client = values[SQLiteEngine.clientKeyKey]
      else { return nil }
      return ApplicationKeys(applicationKey: application, clientKey: client)
    }
    return try guarded {
      if !rotate, let keys = try read() { return keys }
      guard create || rotate else { return nil }
      return try connection.transaction {
        if !rotate, let keys = try read() { return keys }  // made meanwhile by another process
        let keys = ApplicationKeys.random()
        for (key, value) in [
          (SQLiteEngine.applicationKeyKey, keys.applicationKey),
          (SQLiteEngine.clientKeyKey, keys.clientKey),
        ] {
          try connection.run(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(key), .text(value)])
        }
        return keys
      }
    }
  }
}
