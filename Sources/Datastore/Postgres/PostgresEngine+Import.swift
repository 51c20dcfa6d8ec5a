/// `forum import` on PostgreSQL: the schema's owner only. Rows are written as given, under the
/// setting a row changing tables uses (`forum.is_moving`: the triggers keep the row's dates and
/// leave numbering alone), so the feed, storage and readers' keys are kept as for any row; in
/// one transaction for the batch.
extension PostgresEngine {
  func importItems(
    next: () throws -> ImportItem?, outcome: (ImportOutcome) throws -> Void
  ) throws {
    guard try run("SELECT forum.is_board_owner()").bool(0, 0) else {
      throw DatastoreError(.noAccess, detail: "only the board's owner imports (forum init's role)")
    }
    try write {
      _ = try run(
        """
        SELECT set_config('forum.moving',
          (SELECT value FROM forum.secrets WHERE name = 'move_key'), true)
        """)
      while let item = try next() {
        switch item {
        case .object(let object, let anonymousId):
          try outcome(try importObject(object, anonymousId: anonymousId))
        case .roleMember(let role, let userId):
          let inserted = try run(
            """
            INSERT INTO forum.app_role_members(role, user_id) VALUES ($1, $2)
            ON CONFLICT DO NOTHING RETURNING 1
            """, [.text(role), .text(userId)])
          try outcome(inserted.rowCount > 0 ? .imported : .unchanged)
        case .file(let file):
          try outcome(try importFile(file))
        case .counter(let name, let value):
          let moved = try run(
            """
            INSERT INTO forum.counters(name, value) VALUES ($1, $2::bigint)
            ON CONFLICT (name) DO UPDATE SET value = excluded.value
              WHERE forum.counters.value < excluded.value
            RETURNING 1
            """, [.text(name), .text(String(value))])
          try outcome(moved.rowCount > 0 ? .imported : .unchanged)
        }
      }
    }
  }

  func storedObjects(_ objectIds: [String]) throws -> [String: ImportedObject] {
    var found: [String: ImportedObject] = [:]
    for objectId in objectIds {
      let stored = try run(
        """
        SELECT class, create_date::text, update_date::text, readers::text, writers::text,
          data::text FROM forum.objects WHERE object_id = $1
        UNION ALL
        SELECT class, create_date::text, update_date::text, readers::text, writers::text,
          data::text FROM forum.private_objects WHERE object_id = $1
        """, [.text(objectId)])
      guard stored.rowCount > 0, let className = stored.text(0, 0),
        let createDate = stored.text(0, 1).flatMap({ Int64($0) }),
        let updateDate = stored.text(0, 2).flatMap({ Int64($0) }),
        let fields = (try? JSONValue.parse(stored.text(0, 5) ?? ""))?.objectValue
      else { continue }
      found[objectId] = ImportedObject(
        className: className, objectId: objectId, createDate: createDate,
        updateDate: updateDate,
        acl: ACL(
          readers: Set(PostgresEngine.parseArray(stored.text(0, 3))),
          writers: Set(PostgresEngine.parseArray(stored.text(0, 4)))),
        fields: fields)
    }
    return found
  }

  func counter(_ name: String) throws -> Int64 {
    try run("SELECT value::text FROM forum.counters WHERE name = $1", [.text(name)])
      .text(0, 0).flatMap { Int64($0) } ?? 0
  }

  private static func array(_ items: Set<String>) -> PostgresValue {
    guard case .text(let text) = arrayValue(items) else { return .null }
    return .text(text)
  }

  private func importObject(_ object: ImportedObject, anonymousId: String?) throws
    -> ImportOutcome
  {
    var identityPresent = false
    if let anonymousId {
      let owner = try run(
        "SELECT user_id FROM forum.app_identities WHERE secret_hash = $1",
        [.bytes(SHA256.hash(anonymousId))]
      ).text(0, 0)
      if let owner, owner != object.objectId { return .conflict }
      identityPresent = owner != nil
    }
    let stored = try run(
      """
      SELECT class, create_date::text, update_date::text, readers::text, writers::text,
        data::text FROM forum.objects WHERE object_id = $1
      UNION ALL
      SELECT class, create_date::text, update_date::text, readers::text, writers::text,
        data::text FROM forum.private_objects WHERE object_id = $1
      """, [.text(object.objectId)])
    if stored.rowCount > 0 {
      let same =
        stored.text(0, 0) == object.className
        && stored.text(0, 1) == String(object.createDate)
        && stored.text(0, 2) == String(object.updateDate)
        && Set(PostgresEngine.parseArray(stored.text(0, 3))) == object.acl.readers
        && Set(PostgresEngine.parseArray(stored.text(0, 4))) == object.acl.writers
        && (try? JSONValue.parse(stored.text(0, 5) ?? "")) == .object(object.fields)
      guard same, anonymousId == nil || identityPresent else { return .conflict }
      return .unchanged
    }
    _ = try run(
      """
      INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers,
        data, creator)
      VALUES ($1, $2, $3::bigint, $4::bigint, $5::text[], $6::text[], $7::jsonb, $8)
      """,
      [
        .text(object.className), .text(object.objectId), .text(String(object.createDate)),
        .text(String(object.updateDate)), PostgresEngine.array(object.acl.readers),
        PostgresEngine.array(object.acl.writers),
        .text(JSONValue.object(object.fields).jsonText()),
        object.creator.map(PostgresValue.text) ?? .null,
      ])
    if let anonymousId, !identityPresent {
      _ = try run(
        "INSERT INTO forum.app_identities(secret_hash, user_id) VALUES ($1, $2)",
        [.bytes(SHA256.hash(anonymousId)), .text(object.objectId)])
    }
    return .imported
  }

  private func importFile(_ file: ImportedFile) throws -> ImportOutcome {
    let stored = try run(
      """
      SELECT mime_type, create_date::text, update_date::text, readers::text, writers::text, data
        FROM forum.files WHERE name = $1
      UNION ALL
      SELECT mime_type, create_date::text, update_date::text, readers::text, writers::text, data
        FROM forum.private_files WHERE name = $1
      """, [.text(file.name)])
    if stored.rowCount > 0 {
      let same =
        stored.text(0, 0) == file.mimeType && stored.text(0, 1) == String(file.createDate)
        && stored.text(0, 2) == String(file.updateDate)
        && Set(PostgresEngine.parseArray(stored.text(0, 3))) == file.acl.readers
        && Set(PostgresEngine.parseArray(stored.text(0, 4))) == file.acl.writers
        && stored.bytes(0, 5) == file.bytes
      return same ? .unchanged : .conflict
    }
    // A file some may not read goes to the owner-only table (issue 22).
    let table = file.acl.readers.contains("*") ? "forum.files" : "forum.private_files"
    _ = try run(
      """
      INSERT INTO \(table)(name, mime_type, file_size, create_date, update_date, readers,
        writers, data, creator)
      VALUES ($1, $2, $3::bigint, $4::bigint, $5::bigint, $6::text[], $7::text[], $8, $9)
      """,
      [
        .text(file.name), .text(file.mimeType), .text(String(file.bytes.count)),
        .text(String(file.createDate)), .text(String(file.updateDate)),
        PostgresEngine.array(file.acl.readers), PostgresEngine.array(file.acl.writers),
        .bytes(file.bytes), file.creator.map(PostgresValue.text) ?? .null,
      ])
    return .imported
  }
}
