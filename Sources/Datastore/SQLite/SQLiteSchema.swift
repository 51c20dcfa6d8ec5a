/// The SQLite engine's tables, as append-only migrations.
///
/// - `objects`: every class in one table, fields as JSON in `data`, the ACL as space-delimited
///   principal lists (` * abc `) so a listing can test readability while it walks an index.
/// - `files`: file bytes with their ACL.
/// - `identities`: SHA-256 of each user's anonymous secret, never the secret.
/// - `sessions`: SHA-256 of each session token, never the token.
/// - `passwords`: password accounts, by the name in lower case: the Argon2id hash, never the
///   password.
/// - `object_readers`: for every object not readable by `*`, one row per reader principal, so a
///   listing finds the private objects a caller may read by one range of its primary key
///   (principal, class, object) instead of testing every row's text.
/// - `class_counts`: how many rows of each class `*` may read, kept by triggers, for counts.
/// - `read_positions`: each user's read position per parent object (`ReadingEngine`).
/// - `revisions`: earlier states of edited objects, written by the rules' triggers.
/// - `role_members`, `counters` (named sequences), `meta` (the board id, the installed rules).
/// - `changes`: the change feed (`Change`), one row per object written, by triggers.
enum SQLiteSchema {
  /// How many steps `migrations` has: the `user_version` of an up-to-date file, known without
  /// building the steps' SQL (a test checks that the two agree).
  static let version: Int64 = 25

  static let migrations = SchemaMigrator<Connection>(steps: [
    .sql(
      """
      CREATE TABLE objects(
        id INTEGER PRIMARY KEY,
        class TEXT NOT NULL,
        objectId TEXT NOT NULL UNIQUE,
        createDate INTEGER NOT NULL,
        updateDate INTEGER NOT NULL,
        readers TEXT NOT NULL,
        writers TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE INDEX objects_class_createDate ON objects(class, createDate);
      CREATE TABLE files(
        name TEXT PRIMARY KEY,
        mimeType TEXT NOT NULL,
        fileSize INTEGER NOT NULL,
        createDate INTEGER NOT NULL,
        updateDate INTEGER NOT NULL,
        readers TEXT NOT NULL,
        writers TEXT NOT NULL,
        data BLOB NOT NULL
      );
      CREATE TABLE sessions(
        token TEXT PRIMARY KEY,
        userId TEXT NOT NULL,
        expiresAt INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX sessions_userId ON sessions(userId);
      CREATE TABLE role_members(
        role TEXT NOT NULL,
        userId TEXT NOT NULL,
        PRIMARY KEY(role, userId)
      ) WITHOUT ROWID;
      CREATE INDEX role_members_userId ON role_members(userId);
      CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
      """),
    .swift(hashSecrets),
    .sql(
      """
      CREATE TABLE object_readers(
        principal TEXT NOT NULL,
        class TEXT NOT NULL,
        object INTEGER NOT NULL,
        PRIMARY KEY(principal, class, object)
      ) WITHOUT ROWID;
      CREATE INDEX object_readers_object ON object_readers(object);
      CREATE TRIGGER objects_readers_insert AFTER INSERT ON objects
      WHEN instr(NEW.readers, ' * ') = 0 BEGIN
        \(readerRows("NEW"))
      END;
      CREATE TRIGGER objects_readers_update AFTER UPDATE OF readers ON objects
      WHEN NEW.readers IS NOT OLD.readers BEGIN
        DELETE FROM object_readers WHERE object = OLD.id;
        \(readerRows("NEW"))
      END;
      CREATE TRIGGER objects_readers_delete AFTER DELETE ON objects
      WHEN instr(OLD.readers, ' * ') = 0 BEGIN
        DELETE FROM object_readers WHERE object = OLD.id;
      END;
      INSERT INTO object_readers(principal, class, object)
        SELECT p.value, o.class, o.id
        FROM objects o, json_each('["' || replace(trim(o.readers), ' ', '","') || '"]') p
        WHERE instr(o.readers, ' * ') = 0 AND p.value <> '';
      """),
    // Version 4: a change between two public reader lists (a comment taking its thread's) leaves
    // object_readers alone.
    .sql(
      """
      DROP TRIGGER objects_readers_update;
      CREATE TRIGGER objects_readers_update AFTER UPDATE OF readers ON objects
      WHEN NEW.readers IS NOT OLD.readers
        AND (instr(NEW.readers, ' * ') = 0 OR instr(OLD.readers, ' * ') = 0) BEGIN
        DELETE FROM object_readers WHERE object = OLD.id;
        \(readerRows("NEW"))
      END;
      """),
    // Version 5: how many rows of each class everyone may read, kept by triggers, so counting a
    // class (list's "page X/Y") reads one row plus the caller's private rows in `object_readers`
    // instead of every row of the class.
    .sql(
      """
      CREATE TABLE class_counts(
        class TEXT PRIMARY KEY,
        public INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE TRIGGER objects_count_insert AFTER INSERT ON objects
      WHEN instr(NEW.readers, ' * ') > 0 BEGIN
        \(publicCount("NEW.class", by: "+ 1"))
      END;
      CREATE TRIGGER objects_count_delete AFTER DELETE ON objects
      WHEN instr(OLD.readers, ' * ') > 0 BEGIN
        \(publicCount("OLD.class", by: "- 1"))
      END;
      CREATE TRIGGER objects_count_update AFTER UPDATE OF readers ON objects
      WHEN (instr(NEW.readers, ' * ') > 0) <> (instr(OLD.readers, ' * ') > 0) BEGIN
        \(publicCount("NEW.class", by: "+ (CASE WHEN instr(NEW.readers, ' * ') > 0 THEN 1 ELSE -1 END)"))
      END;
      INSERT INTO class_counts(class, public)
        SELECT class, count(*) FROM objects WHERE instr(readers, ' * ') > 0 GROUP BY class;
      """),
    // Version 6: the change feed. Every insert, update and delete of an object adds a row, in the
    // writer's transaction, by triggers (`SQLiteRules.changeTriggers`; installing rules replaces
    // these rule-less ones with ones that also know each class's parent and number). Each row
    // keeps the readers the object had then, so only those who could read it learn of it.
    .sql(
      """
      CREATE TABLE changes(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        class TEXT NOT NULL,
        objectId TEXT NOT NULL,
        kind INTEGER NOT NULL,
        parentId TEXT,
        number INTEGER,
        readers TEXT NOT NULL
      );
      \(SQLiteRules.changeTriggers(for: EngineRules()).joined(separator: ";\n"));
      """),
    // Version 7: a private row's reader rows come from the row as it stands once the rules'
    // triggers ran, not as it was inserted. A child of a private parent inserted with other
    // readers than its parent's (a message with only its author) is given the parent's readers
    // by a rule trigger, whose update already wrote the reader rows; the insert's own rows from
    // the stale readers then collided with them (E500001) or, had they not, would have let the
    // stale reader list the child.
    .sql(
      """
      DROP TRIGGER objects_readers_insert;
      CREATE TRIGGER objects_readers_insert AFTER INSERT ON objects
      WHEN instr(NEW.readers, ' * ') = 0 BEGIN
        INSERT OR IGNORE INTO object_readers(principal, class, object)
          SELECT value, o.class, o.id
          FROM objects o, json_each('["' || replace(trim(o.readers), ' ', '","') || '"]')
          WHERE o.id = NEW.id AND instr(o.readers, ' * ') = 0 AND value <> '';
      END;
      """),
    // Version 8: the full-text index of the classes declared by `IndexSpec(textOf:)`, one row per
    // object (rowid = objects.id), its text fields joined by newlines. Trigrams, so any substring
    // of three or more characters is found in any script, Japanese included. Contentless: the
    // text stays in `objects` only. Its triggers and rows are installed by `prepare` from the
    // declaration (SQLiteSearch), so a board adding a class needs no migration.
    .sql(
      """
      CREATE VIRTUAL TABLE search_text USING fts5(body, content = '', tokenize = 'trigram');
      """),
    // Version 9: each user's read position per parent (rows keyed by the user, so a user's
    // positions are one range), and the earlier revisions of edited objects (written by the
    // rules' triggers only). Both go with their object.
    .sql(
      """
      CREATE TABLE read_positions(
        userId TEXT NOT NULL,
        object TEXT NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY(userId, object)
      ) WITHOUT ROWID;
      CREATE INDEX read_positions_object ON read_positions(object);
      CREATE TABLE revisions(
        id INTEGER PRIMARY KEY,
        object TEXT NOT NULL,
        date INTEGER NOT NULL,
        data TEXT NOT NULL
      );
      CREATE INDEX revisions_object ON revisions(object, id);
      CREATE TRIGGER objects_reading_delete AFTER DELETE ON objects BEGIN
        DELETE FROM revisions WHERE object = OLD.objectId;
        DELETE FROM read_positions WHERE object = OLD.objectId;
      END;
      """),
    // Version 10 changes no table: it keeps forums older than the rules' format 5 (owner indexes)
    // off the file. They would re-install their rules at every open, and a newer forum its own
    // right after, each time rewriting every child row; they refuse a newer schema instead.
    .sql("SELECT 1"),
    // Version 11 (issue 22): no object over 2,000,000 bytes of JSON text or nested deeper than
    // 100 levels, as PostgreSQL's `objects_shape_within`, whatever writes it (the board, an app
    // through `forum serve`); rows written before are kept as they are. Levels are counted in
    // each node's path (`$.a[0].b` is 3; a key holding `.` or `[` counts more), and only when the
    // text holds over 100 brackets at all, so an ordinary write never walks its tree. Text that
    // SQLite cannot read as JSON (nested past its own 2,000 levels) is refused the same way.
    .sql(
      """
      CREATE TRIGGER objects_shape_insert BEFORE INSERT ON objects
      WHEN \(outOfShape("NEW.data")) BEGIN
        SELECT RAISE(ABORT, 'E400002 value');
      END;
      CREATE TRIGGER objects_shape_update BEFORE UPDATE OF data ON objects
      WHEN \(outOfShape("NEW.data")) BEGIN
        SELECT RAISE(ABORT, 'E400002 value');
      END;
      """),
    // Version 12 (issue 22): each revision keeps its number, so that only the first and the
    // latest `Revision.kept - 1` need be kept (the rules' revision trigger drops the rest as it
    // writes one); an object edited more often before is cut down to them here.
    .sql(
      """
      ALTER TABLE revisions ADD COLUMN number INTEGER;
      UPDATE revisions SET number = ranked.n
        FROM (SELECT id, row_number() OVER (PARTITION BY object ORDER BY id) AS n FROM revisions)
          AS ranked
        WHERE ranked.id = revisions.id;
      DELETE FROM revisions WHERE number > 1 AND number <= (SELECT r.number FROM revisions r
        WHERE r.object = revisions.object ORDER BY r.id DESC LIMIT 1) - \(Revision.kept - 1);
      """),
    // Version 13 (issue 20): the expression indexes on `objects` (the board's listings, the
    // rules' owner and pair indexes) covered every row of every class. They are dropped here and
    // made again partial to their class (`WHERE class = 'Thread'`) as the engine prepares the
    // board: its own indexes by name, the rules' with the rules (format 8 reinstalls them).
    .swift(dropWholeTableIndexes),
    // Version 14 (issue 20): the change feed keeps at most the newest `Change.window` rows.
    // When a new row would pass it, the rows up to `pruneBatch` below the window go at once (a
    // range of the primary key), and `meta.changesPrunedThrough` records the last number cut, so
    // a reader behind it is told (`ChangeBatch.missed`). An older board's feed is cut now.
    // Idempotent, as a board whose version was set back by hand runs it again.
    .sql(
      """
      DROP TRIGGER IF EXISTS changes_prune;
      CREATE TRIGGER changes_prune AFTER INSERT ON changes
      WHEN NEW.seq - \(prunedThrough) > \(Change.window) BEGIN
        DELETE FROM changes WHERE seq <= NEW.seq - \(Change.window - Change.pruneBatch);
        INSERT OR REPLACE INTO meta(key, value)
          VALUES ('changesPrunedThrough', NEW.seq - \(Change.window - Change.pruneBatch));
      END;
      INSERT OR REPLACE INTO meta(key, value)
        SELECT 'changesPrunedThrough', max(seq) - \(Change.window) FROM changes
        HAVING max(seq) - \(prunedThrough) > \(Change.window);
      DELETE FROM changes WHERE seq <= \(prunedThrough);
      """),
    // Version 15 (issue 20): the full-text index's terms, read by a search for a one- or
    // two-character word (the trigrams it begins). The index itself is made again with its text
    // ending in two newlines by `SQLiteSearch` (format 2) as the board is prepared; this step
    // also keeps older forums, which would index it the old way, off the file.
    .sql(
      """
      CREATE VIRTUAL TABLE IF NOT EXISTS search_terms USING fts5vocab(search_text, instance);
      """),
    // Version 16 (issue 28, private by construction): `public_class` is a row's class when `*`
    // may read it, else NULL. The indexes a listing walks for public rows are keyed by it, so
    // they hold no row the caller might not read (`SQLiteEngine.findStatement`); the indexes on
    // fields declared before (keyed by `class`, holding every row) are made again keyed by it.
    .swift(indexPublicRows),
    // Version 17 (issue 28 H5): who created each object (`creator`, the caller's user id, set by
    // the engine at insert, never from an object's fields; NULL for rows written before and for
    // writes with no user), and the bytes of JSON each creator's objects hold (`storage`, kept
    // by triggers), read by `forum serve`'s quota per user in one row. Idempotent, as a board
    // whose version was set back by hand runs it again.
    .swift(addCreators),
    // Version 18 (issue 28 H5): files count too: who uploaded each (`files.creator`, set by the
    // engine from the session at insert), its stored bytes added to `storage` and taken away
    // when it is deleted. Idempotent.
    .swift(addFileCreators),
    // Version 19 (issue 34): password accounts. Each holds the user's name in lower case (two
    // names that differ only in case are one), the user, and the Argon2id hash of its password
    // (libsodium's string); never the password. No API reads this table.
    .sql(
      """
      CREATE TABLE IF NOT EXISTS passwords(
        key TEXT PRIMARY KEY,
        userId TEXT NOT NULL UNIQUE,
        passwordHash TEXT NOT NULL
      ) WITHOUT ROWID;
      """),
    // Version 20 (issue 28 H5): rows stored before version 17 get a creator where the board
    // knows one (`attributeOldRows`), and `storage` is counted again from the rows.
    .swift(attributeOldRows),
    // Version 21 (issue 33): no commit merges the full-text index. A commit writes its own small
    // segment and nothing else (`automerge` 0); merges run in bounded steps between writes
    // (`SQLiteSearch.mergeStep`, called by `Datastore.tidy`) once a level holds 16 segments
    // (`usermerge`), so a bulk-seeded board's one large segment is rewritten only after some
    // 60,000 commits, not a few hundred. `crisismerge` 64 is the backstop of a writer that never
    // tidies (the sqlite3 shell, a script killed before its steps): a merge in its commit of the
    // 64 smallest segments, not of the large one. Settings in the file, so every connection
    // keeps them.
    .sql(
      """
      INSERT INTO search_text(search_text, rank) VALUES ('automerge', 0);
      INSERT INTO search_text(search_text, rank) VALUES ('usermerge', 16);
      INSERT INTO search_text(search_text, rank) VALUES ('crisismerge', 64);
      """),
    // Version 22 (issue 29): what a server's read cache needs to tell which commit changed
    // what (`write_clocks`).
    .swift(addWriteClocks),
    // Version 23 (issue 33): the search index off the commit path (`addSearchPending`).
    .sql(addSearchPending),
    // Version 24 (issue 33): a parent's counters in a column of their own
    // (`SQLiteRules.counterColumn`); the rules' format 10 moves them there. Idempotent.
    .swift(addCounterColumn),
    // Version 25 (issue 33): the declared indexes without the class in front
    // (`dropClassColumns`).
    .swift(dropClassColumns),
  ]) { connection, version in
    DatastoreError(
      .systemError, reason: BoardAccessReason.newerSchema(path: connection.path, version: version))
  }

  /// Version 23 (issue 33): rows whose text the full-text index does not hold yet. A commit
  /// writes its row's id here, in its own transaction (so a kill loses nothing), instead of
  /// tokenizing the text into FTS5; `Datastore.tidy` moves them into the index in batches
  /// (`SQLiteSearch.indexPending`) and search reads them directly (`SQLiteEngine.search`). Each
  /// indexed row is in exactly one of the two. Its triggers come from `SQLiteSearch.install`.
  static let addSearchPending =
    "CREATE TABLE IF NOT EXISTS search_pending(id INTEGER PRIMARY KEY);"

  /// The tables outside the change feed whose writes change a server's answers, each with the
  /// clock its writes move (`write_clocks`): who a session is and what roles they hold, the
  /// board's keys and rules, files.
  static let clockedTables = [
    ("sessions", "identity"), ("role_members", "identity"), ("identities", "identity"),
    ("passwords", "identity"), ("meta", "meta"), ("files", "files"),
  ]

  /// Version 22 (issue 29): one counter per kind of write the change feed does not record,
  /// moved by triggers on every row written (by anyone: this server, the prompt, `sqlite3`), and
  /// `quiet`, moved by a commit that changes no answer (`SQLiteEngine.tidy`). With the feed's
  /// last number they tell a server which commit changed what (`StateMark`): an object write
  /// empties only the answers it can change, and the sessions it remembers stay. Idempotent.
  private static func addWriteClocks(_ connection: Connection) throws {
    var sql = """
      CREATE TABLE IF NOT EXISTS write_clocks(name TEXT PRIMARY KEY, n INTEGER NOT NULL)
        WITHOUT ROWID;
      INSERT OR IGNORE INTO write_clocks(name, n)
        VALUES ('identity', 0), ('meta', 0), ('files', 0), ('quiet', 0);

      """
    for (table, clock) in clockedTables {
      for event in ["INSERT", "UPDATE", "DELETE"] {
        let name = "\(table)_clock_\(event.lowercased())"
        sql += """
          DROP TRIGGER IF EXISTS \(name);
          CREATE TRIGGER \(name) AFTER \(event) ON \(table) BEGIN
            UPDATE write_clocks SET n = n + 1 WHERE name = '\(clock)';
          END;

          """
      }
    }
    try connection.execute(sql)
  }

  private static func indexPublicRows(_ connection: Connection) throws {
    // Idempotent, as a board whose version was set back by hand runs it again.
    let hasColumn =
      try connection.prepare(
        "SELECT 1 FROM pragma_table_xinfo('objects') WHERE name = 'public_class'"
      ).firstRow { $0.int(0) } != nil
    if !hasColumn {
      try connection.execute(
        """
        ALTER TABLE objects ADD COLUMN public_class TEXT
          GENERATED ALWAYS AS (CASE WHEN instr(readers, ' * ') > 0 THEN class END) VIRTUAL
        """)
    }
    try connection.execute(
      """
      CREATE INDEX IF NOT EXISTS objects_public_createDate ON objects(public_class, createDate)
        WHERE public_class IS NOT NULL
      """)
    // The declared indexes (`SQLiteEngine.ensureIndexes`, partial to their class since version
    // 13) are made again over the class's public rows, so that a server, which declares none,
    // finds them.
    let declared = try connection.prepare(
      """
      SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'
        AND sql IS NOT NULL AND name <> 'objects_class_createDate'
        AND name NOT LIKE 'objects\\_owner\\_%' ESCAPE '\\'
        AND name NOT LIKE 'objects\\_unique\\_%' ESCAPE '\\'
        AND name NOT LIKE 'objects\\_public\\_%' ESCAPE '\\'
      """
    ).rows { (try $0.text(0) ?? "", try $0.text(1) ?? "") }
    for (name, sql) in declared {
      try connection.execute("DROP INDEX \"\(name.replacing("\"", with: "\"\""))\"")
      guard name.hasPrefix("objects_"), sql.contains("ON objects(class, "),
        sql.contains("WHERE class = '")
      else { continue }
      let publicName = "objects_public_" + name.dropFirst("objects_".count)
      let made = sql.replacing(
        "CREATE INDEX \"\(name)\"", with: "CREATE INDEX IF NOT EXISTS \"\(publicName)\""
      )
      .replacing("ON objects(class, ", with: "ON objects(public_class, ")
      .replacing("WHERE class = '", with: "WHERE public_class = '")
      try connection.execute(made)
    }
  }

  private static func addCreators(_ connection: Connection) throws {
    let present = try connection.prepare(
      "SELECT 1 FROM pragma_table_info('objects') WHERE name = 'creator'"
    ).firstRow { $0.int(0) }
    if present == nil { try connection.execute("ALTER TABLE objects ADD COLUMN creator TEXT") }
    try connection.execute(
      """
      CREATE TABLE IF NOT EXISTS storage(userId TEXT PRIMARY KEY, bytes INTEGER NOT NULL)
        WITHOUT ROWID;
      \(storageTriggers("objects"))
      """)
  }

  private static func addCounterColumn(_ connection: Connection) throws {
    let present = try connection.prepare(
      "SELECT 1 FROM pragma_table_info('objects') WHERE name = '\(SQLiteRules.counterColumn)'"
    ).firstRow { $0.int(0) }
    if present == nil {
      try connection.execute("ALTER TABLE objects ADD COLUMN \(SQLiteRules.counterColumn) TEXT")
    }
  }

  /// Version 25 (issue 33): each declared index (`SQLiteEngine.ensureIndexes`), an app's too, made
  /// again without `public_class` as its first column, under the same name. The index is partial
  /// to its class, so the column said nothing; walking it cost a check of each entry against the
  /// class (a deep page of `list` stepped over 50,000 of them). Idempotent.
  private static func dropClassColumns(_ connection: Connection) throws {
    let prefixed = "ON objects(public_class, "
    let declared = try connection.prepare(
      """
      SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'
        AND name LIKE 'objects\\_public\\_%' ESCAPE '\\' AND name <> 'objects_public_createDate'
        AND instr(sql, ?) > 0 AND instr(sql, 'WHERE public_class = ''') > 0
      """
    ).rows([.text(prefixed)]) { (try $0.text(0) ?? "", try $0.text(1) ?? "") }
    for (name, sql) in declared {
      try connection.execute("DROP INDEX \"\(name.replacing("\"", with: "\"\""))\"")
      try connection.execute(sql.replacing(prefixed, with: "ON objects(", maxReplacements: 1))
    }
  }

  private static func addFileCreators(_ connection: Connection) throws {
    let present = try connection.prepare(
      "SELECT 1 FROM pragma_table_info('files') WHERE name = 'creator'"
    ).firstRow { $0.int(0) }
    if present == nil { try connection.execute("ALTER TABLE files ADD COLUMN creator TEXT") }
    try connection.execute(storageTriggers("files"))
  }

  /// The bytes a row of each table counts for in its creator's `storage`, in SQL (`row` is `NEW`,
  /// `OLD` or the table's name): the one definition the triggers and the recount share.
  private static func storedBytes(_ table: String, _ row: String) -> String {
    table == "files" ? "length(\(row).data)" : "length(CAST(\(row).data AS BLOB))"
  }

  /// The triggers that keep `storage` as the creators' rows of `table` are written, changed and
  /// deleted (versions 17 and 18).
  private static func storageTriggers(_ table: String) -> String {
    let new = storedBytes(table, "NEW")
    let old = storedBytes(table, "OLD")
    return """
      DROP TRIGGER IF EXISTS \(table)_storage_insert;
      CREATE TRIGGER \(table)_storage_insert AFTER INSERT ON \(table)
      WHEN NEW.creator IS NOT NULL BEGIN
        \(storage("NEW.creator", by: "+ \(new)"))
      END;
      DROP TRIGGER IF EXISTS \(table)_storage_update;
      CREATE TRIGGER \(table)_storage_update AFTER UPDATE OF data ON \(table)
      WHEN OLD.creator IS NOT NULL BEGIN
        \(storage("OLD.creator", by: "+ \(new) - \(old)"))
      END;
      DROP TRIGGER IF EXISTS \(table)_storage_delete;
      CREATE TRIGGER \(table)_storage_delete AFTER DELETE ON \(table)
      WHEN OLD.creator IS NOT NULL BEGIN
        \(storage("OLD.creator", by: "- \(old)"))
      END;
      """
  }

  /// Rows stored before version 17 have no creator. Each gets the one the board knows: for a
  /// class with an owner rule (the rules recorded in `meta`), the user its author pointer names;
  /// else, and for files, the one user its ACL lets write (roles aside, and not when `*` may
  /// write). Rows anyone may write (no ACL), rows several users or only roles may write, and
  /// rows no one may write stay without one: no one's storage counts them. Then `storage` is
  /// counted again from the rows. Idempotent: only rows without a creator are looked at.
  private static func attributeOldRows(_ connection: Connection) throws {
    let record = try connection.prepare("SELECT value FROM meta WHERE key = 'rules'").firstRow {
      try $0.text(0)
    }
    var owners: [OwnerRule] = []
    if let text = record ?? nil, let space = text.firstIndex(of: " ") {
      owners =
        (try? EngineRules(record: JSONValue.parse(String(text[space...].dropFirst()))))?.owners
        ?? []
    }
    for owner in owners where Validation.isName(owner.field) {
      try connection.run(
        """
        UPDATE objects SET creator = json_extract(data, ?)
        WHERE creator IS NULL AND class = ? AND json_extract(data, ?) = 'Pointer'
          AND typeof(json_extract(data, ?)) = 'text'
        """,
        [
          .text("$.\(owner.field).objectId"), .text(owner.className),
          .text("$.\(owner.field).__type"), .text("$.\(owner.field).objectId"),
        ])
    }
    for (table, key) in [("objects", "objectId"), ("files", "name")] {
      let rows = try connection.prepare(
        "SELECT \(key), writers FROM \(table) WHERE creator IS NULL AND instr(writers, ' * ') = 0"
      ).rows { (try $0.text(0) ?? "", try $0.text(1) ?? "") }
      let update = try connection.prepare("UPDATE \(table) SET creator = ? WHERE \(key) = ?")
      for (id, writers) in rows {
        let users = writers.split(separator: " ").filter { !$0.hasPrefix("role:") }
        guard users.count == 1 else { continue }
        try update.run([.text(String(users[0])), .text(id)])
      }
    }
    let rows = ["objects", "files"].map {
      "SELECT creator, \(storedBytes($0, $0)) AS bytes FROM \($0) WHERE creator IS NOT NULL"
    }
    try connection.execute(
      """
      DELETE FROM storage;
      INSERT INTO storage(userId, bytes)
        SELECT creator, sum(bytes) FROM (\(rows.joined(separator: " UNION ALL ")))
        GROUP BY creator;
      """)
  }

  /// Adds `change` to the stored bytes of the user `userId` (an SQL expression).
  private static func storage(_ userId: String, by change: String) -> String {
    """
    INSERT INTO storage(userId, bytes) VALUES (\(userId), 0 \(change))
          ON CONFLICT(userId) DO UPDATE SET bytes = bytes \(change);
    """
  }

  /// The last change number the feed pruned (0 for none), in SQL.
  static let prunedThrough =
    "coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'changesPrunedThrough'), 0)"

  private static func dropWholeTableIndexes(_ connection: Connection) throws {
    let names = try connection.prepare(
      """
      SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'objects'
        AND sql IS NOT NULL AND name <> 'objects_class_createDate'
      """
    ).rows { try $0.text(0) ?? "" }
    for name in names {
      try connection.execute("DROP INDEX \"\(name.replacing("\"", with: "\"\""))\"")
    }
  }

  /// True (in SQL) when the JSON text `data` is over `DatastoreClient.maximumObjectBytes` or
  /// nests deeper than `DatastoreClient.maximumObjectDepth`.
  private static func outOfShape(_ data: String) -> String {
    let depth = DatastoreClient.maximumObjectDepth
    return """
      length(CAST(\(data) AS BLOB)) > \(DatastoreClient.maximumObjectBytes)
        OR (length(\(data)) - length(replace(replace(\(data), '[', ''), '{', '')) > \(depth)
          AND CASE WHEN NOT json_valid(\(data)) THEN 1
            ELSE (SELECT max(length(fullkey) - length(replace(replace(fullkey, '.', ''), '[', '')))
              FROM json_tree(\(data))) > \(depth) END)
      """
  }

  /// Adds `change` to the public row count of `className` (an SQL expression).
  private static func publicCount(_ className: String, by change: String) -> String {
    """
    INSERT INTO class_counts(class, public) VALUES (\(className), 0 \(change))
          ON CONFLICT(class) DO UPDATE SET public = public \(change);
    """
  }

  /// The `object_readers` rows of a row not readable by `*` (`row` is NEW or OLD). Principals
  /// are letters, digits, `:`, `_` and `-`, so the space-delimited column turns into a JSON
  /// array by quoting alone.
  private static func readerRows(_ row: String) -> String {
    """
    INSERT INTO object_readers(principal, class, object)
          SELECT value, \(row).class, \(row).id
          FROM json_each('["' || replace(trim(\(row).readers), ' ', '","') || '"]')
          WHERE instr(\(row).readers, ' * ') = 0 AND value <> '';
    """
  }

  /// Version 2: a board id; anonymous ids move out of the user objects into `identities` as
  /// SHA-256 hashes (so an old profile, whose UUID was its secret, is still the same user); the
  /// old sessions, kept in clear, are dropped (their owners sign in again with their secret).
  /// Runs with `secure_delete` so the old text is overwritten, not just unlinked.
  private static func hashSecrets(_ connection: Connection) throws {
    try connection.execute(
      """
      PRAGMA secure_delete = ON;
      CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE identities(
        secretHash BLOB PRIMARY KEY,
        userId TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX identities_userId ON identities(userId);
      """)
    try connection.run(
      "INSERT INTO meta(key, value) VALUES ('boardId', ?)", [.text(Validation.randomId(length: 24))]
    )
    let users = try connection.prepare(
      """
      SELECT objectId, json_extract(data, '$.authData.anonymous.id') FROM objects
      WHERE class = 'user' AND json_type(data, '$.authData.anonymous.id') = 'text'
      """
    ).rows { (try $0.text(0) ?? "", try $0.text(1) ?? "") }
    for (userId, secret) in users {
      try connection.run(
        "INSERT OR IGNORE INTO identities(secretHash, userId) VALUES (?, ?)",
        [.blob(SHA256.hash(secret)), .text(userId)])
    }
    try connection.execute(
      """
      UPDATE objects SET data = json_remove(data, '$.authData')
      WHERE class = 'user' AND json_type(data, '$.authData') IS NOT NULL;
      DROP INDEX IF EXISTS objects_user_authData_anonymous_id;
      DROP TABLE sessions;
      CREATE TABLE sessions(
        tokenHash BLOB PRIMARY KEY,
        userId TEXT NOT NULL,
        expiresAt INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX sessions_userId ON sessions(userId);
      PRAGMA secure_delete = OFF;
      """)
  }
}
