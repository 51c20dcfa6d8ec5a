/// `forum import` on PostgreSQL (`SQLImport`): the schema's owner only. Rows are written as
/// given, under the setting a row changing tables uses (`forum.is_moving`: the triggers keep the
/// row's dates and leave numbering alone), so the feed, storage and readers' keys are kept as
/// for any row; in one transaction for the batch.
extension PostgresEngine: SQLImport {
  func importing(_ batch: () throws -> Void) throws {
    guard try run("SELECT forum.is_board_owner()").bool(0, 0) else {
      throw DatastoreError(.noAccess, detail: "only the board's owner imports (forum init's role)")
    }
    try write {
      _ = try run(
        """
        SELECT set_config('forum.moving',
          (SELECT value FROM forum.secrets WHERE name = 'move_key'), true)
        """)
      try batch()
    }
  }

  func storedObject(_ objectId: String) -> SQL {
    let columns = PostgresEngine.objectColumns
    return """
      SELECT \(sql: columns) FROM forum.objects o WHERE o.object_id = \(objectId)
      UNION ALL
      SELECT \(sql: columns) FROM forum.private_objects o WHERE o.object_id = \(objectId)
      """
  }

  func identityOwner(_ secretHash: [UInt8]) -> SQL {
    "SELECT user_id FROM forum.app_identities WHERE secret_hash = \(.blob(secretHash))"
  }

  /// A row some may not read, or of a private class, goes to the owner-only table, as
  /// `forum init` moves one (`PostgresSchema.movePrivateRows`; issue 22): the route trigger
  /// that puts a member's private row there lets a row under `forum.moving` be.
  func insertImported(_ object: ImportedObject, identityHash: [UInt8]?) throws {
    let isPrivate =
      privateClasses.contains(object.className) || !object.acl.readers.contains("*")
    let table: SQL = isPrivate ? "forum.private_objects" : "forum.objects"
    _ = try run(
      sql: """
        INSERT INTO \(sql: table)(class, object_id, create_date, update_date, readers, writers,
          data, creator)
        VALUES (\(object.className), \(object.objectId), \(object.createDate)::bigint, \
        \(object.updateDate)::bigint, \(PostgresEngine.arrayValue(object.acl.readers))::text[], \
        \(PostgresEngine.arrayValue(object.acl.writers))::text[], \
        \(JSONValue.object(object.fields).jsonText())::jsonb, \
        \(object.creator.map(SQLValue.text) ?? .null))
        """)
    if let identityHash {
      _ = try run(
        sql: """
          INSERT INTO forum.app_identities(secret_hash, user_id) \
          VALUES (\(.blob(identityHash)), \(object.objectId))
          """)
    }
  }

  func storedFile(_ name: String) -> SQL {
    let columns = PostgresEngine.fileColumns("f")
    return """
      SELECT \(sql: columns), f.data AS data FROM forum.files f WHERE f.name = \(name)
      UNION ALL
      SELECT \(sql: columns), f.data AS data FROM forum.private_files f WHERE f.name = \(name)
      """
  }

  func insertImported(_ file: ImportedFile) throws {
    // A file some may not read goes to the owner-only table (issue 22).
    let table: SQL = file.acl.readers.contains("*") ? "forum.files" : "forum.private_files"
    _ = try run(
      sql: """
        INSERT INTO \(sql: table)(name, mime_type, file_size, create_date, update_date, readers,
          writers, data, creator)
        VALUES (\(file.name), \(file.mimeType), \(Int64(file.bytes.count))::bigint, \
        \(file.createDate)::bigint, \(file.updateDate)::bigint, \
        \(PostgresEngine.arrayValue(file.acl.readers))::text[], \
        \(PostgresEngine.arrayValue(file.acl.writers))::text[], \(.blob(file.bytes)), \
        \(file.creator.map(SQLValue.text) ?? .null))
        """)
  }

  func importRoleMember(_ role: String, _ userId: String) throws -> Bool {
    try run(
      sql: """
        INSERT INTO forum.app_role_members(role, user_id) VALUES (\(role), \(userId))
        ON CONFLICT DO NOTHING RETURNING 1
        """
    ).rowCount > 0
  }

  func raiseCounter(_ name: String, to value: Int64) throws -> Bool {
    try run(
      sql: """
        INSERT INTO forum.counters(name, value) VALUES (\(name), \(value)::bigint)
        ON CONFLICT (name) DO UPDATE SET value = excluded.value
          WHERE forum.counters.value < excluded.value
        RETURNING 1
        """
    ).rowCount > 0
  }

  /// No trigger counted the children (the batch runs as a row changing tables does): the parent,
  /// in whichever table it is, gets its count, last number and last activity here, as the
  /// owner's bookkeeping (its date and the feed stay, as a child's insert leaves them).
  func countUp(_ parent: String, by rule: ChildRule, for children: ImportedChildren) throws {
    func number(_ field: String) -> SQL { "coalesce((data->>\(literal: field))::bigint, 0)" }
    for table: SQL in ["forum.objects", "forum.private_objects"] {
      _ = try run(
        sql: """
          UPDATE \(sql: table) SET data = data || jsonb_build_object(
            \(literal: rule.countField), \(sql: number(rule.countField)) + \(children.count)::bigint,
            \(literal: rule.lastNumberField),
              greatest(\(sql: number(rule.lastNumberField)), \(children.lastNumber)::bigint),
            \(literal: rule.activityField),
              greatest(\(sql: number(rule.activityField)), \(children.lastActivity)::bigint))
          WHERE class = \(rule.parentClass) AND object_id = \(parent)
          """)
    }
  }

  func counter(_ name: String) throws -> Int64 {
    try run("SELECT value::text FROM forum.counters WHERE name = $1", [.text(name)])
      .text(0, 0).flatMap { Int64($0) } ?? 0
  }
}
