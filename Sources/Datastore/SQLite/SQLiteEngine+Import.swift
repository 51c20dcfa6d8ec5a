/// `forum import` on SQLite: whoever holds the file is the board's owner. Rows are written as
/// given (the triggers that keep readers, counts, the feed and storage still run), in one
/// transaction for the batch.
extension SQLiteEngine {
  func importItems(
    next: () throws -> ImportItem?, outcome: (ImportOutcome) throws -> Void
  ) throws {
    noteIdentityWrite()
    try transaction {
      // A parent imported here, as given: its children's insert triggers count it up, and the
      // importer gave it its counts already (PostgreSQL's import runs no trigger).
      let parents = Set(rules.children.map(\.parentClass))
      var given: [(objectId: String, counts: String)] = []
      while let item = try next() {
        switch item {
        case .object(let object, let anonymousId):
          let result = try importObject(object, anonymousId: anonymousId)
          if result == .imported, parents.contains(object.className) {
            if let counts = storedColumns(object.className, object.fields).counts, !counts.isEmpty {
              given.append((object.objectId, JSONValue.object(counts).jsonText()))
            }
          }
          try outcome(result)
        case .roleMember(let role, let userId):
          let values: [SQLValue] = [.text(role), .text(userId)]
          let present = try connection.prepare(
            "SELECT 1 FROM role_members WHERE role = ? AND userId = ?"
          ).firstRow(values) { $0.int(0) }
          if present != nil {
            try outcome(.unchanged)
            continue
          }
          try connection.run("INSERT INTO role_members(role, userId) VALUES (?, ?)", values)
          try outcome(.imported)
        case .file(let file):
          try outcome(try importFile(file))
        case .counter(let name, let value):
          let stored = try counter(name)
          guard stored < value else {
            try outcome(.unchanged)
            continue
          }
          try connection.run(
            """
            INSERT INTO counters(name, value) VALUES (?, ?)
            ON CONFLICT(name) DO UPDATE SET value = excluded.value
            """, [.text(name), .integer(value)])
          try outcome(.imported)
        }
      }
      for parent in given {
        try connection.run(
          "UPDATE objects SET counts = ? WHERE objectId = ? AND counts IS NOT ?",
          [.text(parent.counts), .text(parent.objectId), .text(parent.counts)])
      }
    }
  }

  func storedObjects(_ objectIds: [String]) throws -> [String: ImportedObject] {
    var found: [String: ImportedObject] = [:]
    let statement = try connection.prepare(
      """
      SELECT class, createDate, updateDate, readers, writers, \(SQLiteEngine.mergedData(nil))
      FROM objects WHERE objectId = ?
      """)
    for objectId in objectIds {
      let row = try statement.firstRow([.text(objectId)]) { row in
        (
          try row.text(0) ?? "", row.int(1), row.int(2), try row.text(3) ?? "",
          try row.text(4) ?? "", try row.text(5) ?? ""
        )
      }
      guard let row, let fields = (try? JSONValue.parse(row.5))?.objectValue else { continue }
      found[objectId] = ImportedObject(
        className: row.0, objectId: objectId, createDate: row.1, updateDate: row.2,
        acl: ACL(readers: ACL.parseColumn(row.3), writers: ACL.parseColumn(row.4)),
        fields: fields)
    }
    return found
  }

  /// An object's fields as stored: a parent's counters in their own column
  /// (`SQLiteRules.counterColumn`), the rest in `data`.
  private func storedColumns(_ className: String, _ fields: [String: JSONValue])
    -> (data: [String: JSONValue], counts: [String: JSONValue]?)
  {
    let counters = rules.counterFields(of: className)
    guard !counters.isEmpty else { return (fields, nil) }
    return (
      fields.filter { !counters.contains($0.key) }, fields.filter { counters.contains($0.key) }
    )
  }

  func counter(_ name: String) throws -> Int64 {
    try connection.prepare("SELECT value FROM counters WHERE name = ?").firstRow([.text(name)]) {
      $0.int(0)
    } ?? 0
  }

  private func importObject(_ object: ImportedObject, anonymousId: String?) throws
    -> ImportOutcome
  {
    var identityPresent = false
    if let anonymousId {
      let owner =
        try connection.prepare("SELECT userId FROM identities WHERE secretHash = ?")
        .firstRow([.blob(SHA256.hash(anonymousId))]) { try $0.text(0) } ?? nil
      if let owner, owner != object.objectId { return .conflict }
      identityPresent = owner != nil
    }
    let readers = ACL.column(object.acl.readers)
    let writers = ACL.column(object.acl.writers)
    let stored = try connection.prepare(
      """
      SELECT class, createDate, updateDate, readers, writers, \(SQLiteEngine.mergedData(nil))
      FROM objects WHERE objectId = ?
      """
    ).firstRow([.text(object.objectId)]) { row in
      (
        try row.text(0) ?? "", row.int(1), row.int(2), try row.text(3) ?? "",
        try row.text(4) ?? "", try row.text(5) ?? ""
      )
    }
    if let stored {
      let same =
        stored.0 == object.className && stored.1 == object.createDate
        && stored.2 == object.updateDate && stored.3 == readers && stored.4 == writers
        && (try? JSONValue.parse(stored.5)) == .object(object.fields)
      guard same, anonymousId == nil || identityPresent else { return .conflict }
      return .unchanged
    }
    let (data, counts) = storedColumns(object.className, object.fields)
    try connection.run(
      """
      INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data, creator,
        counts)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(object.className), .text(object.objectId), .integer(object.createDate),
        .integer(object.updateDate), .text(readers), .text(writers),
        .text(JSONValue.object(data).jsonText()), object.creator.map(SQLValue.text) ?? .null,
        counts.map { .text(JSONValue.object($0).jsonText()) } ?? .null,
      ])
    if let anonymousId, !identityPresent {
      try connection.run(
        "INSERT INTO identities(secretHash, userId) VALUES (?, ?)",
        [.blob(SHA256.hash(anonymousId)), .text(object.objectId)])
    }
    return .imported
  }

  private func importFile(_ file: ImportedFile) throws -> ImportOutcome {
    let readers = ACL.column(file.acl.readers)
    let writers = ACL.column(file.acl.writers)
    let stored = try connection.prepare(
      "SELECT mimeType, createDate, updateDate, readers, writers, data FROM files WHERE name = ?"
    ).firstRow([.text(file.name)]) { row in
      (
        try row.text(0) ?? "", row.int(1), row.int(2), try row.text(3) ?? "",
        try row.text(4) ?? "", row.blob(5)
      )
    }
    if let stored {
      let same =
        stored.0 == file.mimeType && stored.1 == file.createDate && stored.2 == file.updateDate
        && stored.3 == readers && stored.4 == writers && stored.5 == file.bytes
      return same ? .unchanged : .conflict
    }
    try connection.run(
      """
      INSERT INTO files(name, mimeType, fileSize, createDate, updateDate, readers, writers, data,
        creator)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(file.name), .text(file.mimeType), .integer(Int64(file.bytes.count)),
        .integer(file.createDate), .integer(file.updateDate), .text(readers), .text(writers),
        .blob(file.bytes), file.creator.map(SQLValue.text) ?? .null,
      ])
    return .imported
  }
}
