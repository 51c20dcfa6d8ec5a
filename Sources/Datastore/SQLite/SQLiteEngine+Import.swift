/// `forum import` on SQLite (`SQLImport`): whoever holds the file is the board's owner. Rows are
/// written as given (the triggers that keep readers, counts, the feed and storage still run),
/// in one transaction for the batch.
extension SQLiteEngine: SQLImport {
  /// A parent imported in the batch keeps the counts the importer gave it: its children's insert
  /// triggers count it up as they come, so its counts are set back at the end (PostgreSQL's
  /// import runs no trigger).
  func importing(_ batch: () throws -> Void) throws {
    noteIdentityWrite()
    try transaction {
      importedCounts = []
      defer { importedCounts = [] }
      try batch()
      for (objectId, counts) in importedCounts {
        try connection.run(
          "UPDATE objects SET counts = ? WHERE objectId = ? AND counts IS NOT ?",
          [.text(counts), .text(objectId), .text(counts)])
      }
    }
  }

  func storedObject(_ objectId: String) -> SQL {
    "SELECT \(sql: SQLiteEngine.objectColumns) FROM objects o WHERE o.objectId = \(objectId)"
  }

  func identityOwner(_ secretHash: [UInt8]) -> SQL {
    "SELECT userId AS user_id FROM identities WHERE secretHash = \(.blob(secretHash))"
  }

  func insertImported(_ object: ImportedObject, identityHash: [UInt8]?) throws {
    // A parent's counters go to their own column (`SQLiteRules.counterColumn`).
    let counters = rules.counterFields(of: object.className)
    let data = object.fields.filter { !counters.contains($0.key) }
    let counts = counters.isEmpty ? nil : object.fields.filter { counters.contains($0.key) }
    let countsText = counts.map { JSONValue.object($0).jsonText() }
    try connection.run(
      """
      INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data, creator,
        counts)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(object.className), .text(object.objectId), .integer(object.createDate),
        .integer(object.updateDate), .text(ACL.column(object.acl.readers)),
        .text(ACL.column(object.acl.writers)), .text(JSONValue.object(data).jsonText()),
        object.creator.map(SQLValue.text) ?? .null, countsText.map(SQLValue.text) ?? .null,
      ])
    if let counts, !counts.isEmpty, let countsText,
      rules.children.contains(where: { $0.parentClass == object.className })
    {
      importedCounts.append((object.objectId, countsText))
    }
    if let identityHash {
      try connection.run(
        "INSERT INTO identities(secretHash, userId) VALUES (?, ?)",
        [.blob(identityHash), .text(object.objectId)])
    }
  }

  func storedFile(_ name: String) -> SQL {
    "SELECT \(sql: SQLiteEngine.fileColumns("f")), f.data AS data FROM files f WHERE f.name = \(name)"
  }

  func insertImported(_ file: ImportedFile) throws {
    try connection.run(
      """
      INSERT INTO files(name, mimeType, fileSize, createDate, updateDate, readers, writers, data,
        creator)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(file.name), .text(file.mimeType), .integer(Int64(file.bytes.count)),
        .integer(file.createDate), .integer(file.updateDate), .text(ACL.column(file.acl.readers)),
        .text(ACL.column(file.acl.writers)), .blob(file.bytes),
        file.creator.map(SQLValue.text) ?? .null,
      ])
  }

  func importRoleMember(_ role: String, _ userId: String) throws -> Bool {
    try connection.firstRow(
      """
      INSERT INTO role_members(role, userId) VALUES (\(role), \(userId))
      ON CONFLICT DO NOTHING RETURNING 1
      """
    ) { $0.int(0) } != nil
  }

  func raiseCounter(_ name: String, to value: Int64) throws -> Bool {
    try connection.firstRow(
      """
      INSERT INTO counters(name, value) VALUES (\(name), \(value))
      ON CONFLICT(name) DO UPDATE SET value = excluded.value WHERE value < excluded.value
      RETURNING 1
      """
    ) { $0.int(0) } != nil
  }

  /// Its insert triggers counted the parent up as each child came.
  func countUp(_ parent: String, by rule: ChildRule, for children: ImportedChildren) {}

  func counter(_ name: String) throws -> Int64 {
    try connection.prepare("SELECT value FROM counters WHERE name = ?").firstRow([.text(name)]) {
      $0.int(0)
    } ?? 0
  }
}
