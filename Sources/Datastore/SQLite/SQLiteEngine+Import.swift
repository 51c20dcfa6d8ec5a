/// `forum import` on SQLite: whoever holds the file is the board's owner. Rows are written as
/// given (the triggers that keep readers, counts, the feed and storage still run), in one
/// transaction for the batch.
extension SQLiteEngine {
  func importItems(_ items: [ImportItem]) throws -> [ImportOutcome] {
    noteIdentityWrite()
    return try transaction {
      try items.map { item in
        switch item {
        case .object(let object, let anonymousId):
          return try importObject(object, anonymousId: anonymousId)
        case .roleMember(let role, let userId):
          let values: [SQLValue] = [.text(role), .text(userId)]
          let present = try connection.prepare(
            "SELECT 1 FROM role_members WHERE role = ? AND userId = ?"
          ).firstRow(values) { $0.int(0) }
          if present != nil { return .unchanged }
          try connection.run("INSERT INTO role_members(role, userId) VALUES (?, ?)", values)
          return .imported
        case .file(let file):
          return try importFile(file)
        }
      }
    }
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
      SELECT class, createDate, updateDate, readers, writers, data FROM objects
      WHERE objectId = ?
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
    try connection.run(
      """
      INSERT INTO objects(class, objectId, createDate, updateDate, readers, writers, data, creator)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(object.className), .text(object.objectId), .integer(object.createDate),
        .integer(object.updateDate), .text(readers), .text(writers),
        .text(JSONValue.object(object.fields).jsonText()),
        object.creator.map(SQLValue.text) ?? .null,
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
