/// The full-text index on SQLite: the `search_text` FTS5 table (trigram tokenizer, schema
/// version 8) and, for each class declared by `IndexSpec(textOf:fields:)`, triggers that keep its
/// row in the writer's transaction. Class and field names are `Validation.isName` names (checked
/// before they get here), so they are safe inside SQL text.
enum SQLiteSearch {
  /// The meta key recording which classes and fields the triggers index.
  static let metaKey = "search"

  /// Bumped when the trigger text below changes, so open files get the new triggers and their
  /// rows indexed again (format 2, issue 20: the text ends in two newlines; format 3, issue 33:
  /// a commit queues its row in `search_pending` instead of tokenizing it; format 4: one insert
  /// trigger for all the classes).
  static let format = 4

  static func fields(of specs: [IndexSpec]) -> [String: [String]] { TextSearch.fields(of: specs) }

  /// A stable text of the declaration, recorded in `meta` beside the format.
  static func record(_ fields: [String: [String]], format: Int = format) -> String {
    "\(format) "
      + fields.keys.sorted().map { "\($0):\(fields[$0]!.joined(separator: ","))" }.joined(
        separator: ";")
  }

  /// The declaration a record describes (empty for none or a record of another format).
  static func fields(fromRecord record: String?, format: Int = format) -> [String: [String]] {
    guard let record, record.hasPrefix("\(format) ") else { return [:] }
    var fields: [String: [String]] = [:]
    for entry in record.dropFirst("\(format) ".count).split(separator: ";") {
      let parts = entry.split(separator: ":", maxSplits: 1)
      guard parts.count == 2 else { continue }
      fields[String(parts[0])] = parts[1].split(separator: ",").map(String.init)
    }
    return fields
  }

  /// The text a row of `className` is indexed by (`row` is NEW, OLD or a table alias).
  static func body(_ row: String, fields: [String]) -> String {
    fields.map { "coalesce(json_extract(\(row).data, \(SQLiteRules.path($0))), '')" }.joined(
      separator: " || char(10) || ")
  }

  /// What the index holds of a row: its text with two newlines after it, so that every one- or
  /// two-character substring of the text begins a trigram (the last two characters too), and a
  /// short word is found among the trigrams it begins (`SQLiteEngine.trigrams(startingWith:)`).
  static func indexed(_ row: String, fields: [String]) -> String {
    "(\(body(row, fields: fields))) || char(10, 10)"
  }

  /// What the index holds of the row `o` (an `objects` alias), whatever its class.
  static func indexed(_ row: String, classes fields: [String: [String]]) -> String {
    let cases = fields.keys.sorted().map {
      "WHEN '\($0)' THEN \(indexed(row, fields: fields[$0]!))"
    }
    return "CASE \(row).class \(cases.joined(separator: " ")) END"
  }

  /// Rows queued in `search_pending` past which a commit indexes them all itself: the backstop
  /// of writers that never tidy (the sqlite3 shell, a script killed before its steps), so the
  /// part of a search that reads queued rows directly stays small.
  static let pendingLimit = 1000

  /// Queued rows one `indexPending` step takes at most: one segment, a few milliseconds.
  static let pendingBatch = 256

  /// Queued rows below which a step between two writes leaves them for later (a batch makes one
  /// segment of many rows; an idle step takes any).
  static let pendingBusyMinimum = 64

  /// The update and delete triggers that keep `className`'s rows in the index (a new row is
  /// queued by `insertTrigger`, one for all the classes). An update queues its row's id in
  /// `search_pending` only when the text changed (a comment updates its thread's counters,
  /// which must not re-queue the thread); a row already indexed leaves the index the
  /// moment its text changes or it goes (FTS5 removes a contentless row by its old text), and
  /// a queued one leaves the queue.
  static func triggers(_ className: String, fields: [String]) -> [String] {
    let new = indexed("NEW", fields: fields)
    let old = indexed("OLD", fields: fields)
    let unqueued = "NOT EXISTS (SELECT 1 FROM search_pending WHERE id = OLD.id)"
    return [
      """
      CREATE TRIGGER search_delete_\(className) AFTER DELETE ON objects
      WHEN OLD.class = '\(className)' BEGIN
        INSERT INTO search_text(search_text, rowid, body) SELECT 'delete', OLD.id, \(old)
          WHERE \(unqueued);
        DELETE FROM search_pending WHERE id = OLD.id;
      END
      """,
      """
      CREATE TRIGGER search_update_\(className) AFTER UPDATE OF data ON objects
      WHEN NEW.class = '\(className)' AND (\(new)) IS NOT (\(old)) BEGIN
        INSERT INTO search_text(search_text, rowid, body) SELECT 'delete', OLD.id, \(old)
          WHERE \(unqueued);
        INSERT OR IGNORE INTO search_pending(id) VALUES (NEW.id);
      END
      """,
    ]
  }

  /// The insert trigger of every indexed class, one for all: SQLite runs each trigger on a
  /// table in a frame of its own at every insert, its WHEN inside it (7,000 instructions each
  /// a comment for the classes it was not). Equalities, not `IN (…)`: SQLite looks a list of
  /// three up in a table it makes each time.
  static func insertTrigger(_ classes: [String]) -> String {
    """
    CREATE TRIGGER search_insert AFTER INSERT ON objects
    WHEN \(classes.map { "NEW.class = '\($0)'" }.joined(separator: " OR ")) BEGIN
      INSERT INTO search_pending(id) VALUES (NEW.id);
    END
    """
  }

  /// The backstop (`pendingLimit`): the commit that queues one row too many indexes the queue.
  static func pendingLimitTrigger(_ fields: [String: [String]]) -> String {
    """
    CREATE TRIGGER search_pending_limit AFTER INSERT ON search_pending
    WHEN (SELECT count(*) FROM search_pending) > \(pendingLimit) BEGIN
      INSERT INTO search_text(rowid, body)
        SELECT p.id, \(indexed("o", classes: fields)) FROM search_pending p
        JOIN objects o ON o.id = p.id ORDER BY p.id;
      DELETE FROM search_pending;
    END
    """
  }

  /// Moves the queued rows up to `through` (an id) into the index, in the caller's transaction.
  static func indexPending(through: Int64, fields: [String: [String]], on connection: Connection)
    throws
  {
    try connection.run(
      """
      INSERT INTO search_text(rowid, body)
        SELECT p.id, \(indexed("o", classes: fields)) FROM search_pending p
        JOIN objects o ON o.id = p.id WHERE p.id <= ? ORDER BY p.id
      """, [.integer(through)])
    try connection.run("DELETE FROM search_pending WHERE id <= ?", [.integer(through)])
  }

  /// Installs the triggers for `fields` and indexes every existing row of those classes, in one
  /// transaction, unless the file already records exactly that declaration. Returns the
  /// declaration now in force.
  static func install(_ fields: [String: [String]], on connection: Connection) throws -> [String:
    [String]]
  {
    let wanted = record(fields)
    let find = "SELECT value FROM meta WHERE key = ?"
    let recorded = try connection.prepare(find).firstRow([.text(metaKey)]) { try $0.text(0) } ?? nil
    if recorded == wanted { return fields }
    try connection.transaction {
      // Another process may have installed it while this one waited for the lock.
      let current = try connection.prepare(find).firstRow([.text(metaKey)]) { try $0.text(0) }
      guard current ?? nil != wanted else { return }
      let old = try connection.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'search\\_%' ESCAPE '\\'"
      ).rows { try $0.text(0) ?? "" }
      for name in old { try connection.execute("DROP TRIGGER \"\(name)\"") }
      try connection.execute(SQLiteSchema.addSearchPending)
      // Formats 2 and 3 indexed the same text (2 in the commit): only the triggers change.
      if [2, 3].contains(where: { fields == Self.fields(fromRecord: current ?? nil, format: $0) }) {
        try installTriggers(fields, on: connection)
        try connection.run(
          "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(metaKey), .text(wanted)])
        return
      }
      // Format 1 indexed the same text without the two newlines. What they add to a row's
      // trigrams are those of its last two characters followed by them, so each row gets only
      // these, inserted under its rowid (a contentless index keeps a row as the union of what was
      // inserted for it, and the delete triggers remove all of it): a million posts take seconds,
      // where indexing them again took minutes.
      let upgrade = fields == Self.fields(fromRecord: current ?? nil, format: 1)
      if !upgrade {
        try connection.execute("INSERT INTO search_text(search_text) VALUES ('delete-all')")
      }
      // Every row is indexed below: none stays queued.
      try connection.execute("DELETE FROM search_pending")
      try installTriggers(fields, on: connection)
      for className in fields.keys.sorted() {
        let text =
          upgrade
          ? "substr(\(body("o", fields: fields[className]!)), -2) || char(10, 10)"
          : indexed("o", fields: fields[className]!)
        try connection.run(
          """
          INSERT INTO search_text(rowid, body)
          SELECT o.id, \(text) FROM objects o WHERE o.class = ? ORDER BY o.id
          """, [.text(className)])
      }
      try connection.run(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [.text(metaKey), .text(wanted)])
    }
    return fields
  }

  private static func installTriggers(_ fields: [String: [String]], on connection: Connection)
    throws
  {
    for className in fields.keys.sorted() {
      for sql in triggers(className, fields: fields[className]!) { try connection.execute(sql) }
    }
    try connection.execute(insertTrigger(fields.keys.sorted()))
    try connection.execute(pendingLimitTrigger(fields))
  }

  /// Pages one `mergeStep` writes at most: a few milliseconds of work, between two writes.
  static let mergePages = 32

  /// One step of merging the index's segments (schema 21 turned FTS5's merges in commits off):
  /// only when a level holds `usermerge` (16) segments or a merge is under way, at most
  /// `mergePages` pages. FTS5 counts two changes or more when it merged.
  static let mergeStep =
    "INSERT INTO search_text(search_text, rank) VALUES ('merge', \(mergePages))"

  /// The FTS5 query for the terms that trigrams can serve (three or more characters): each a
  /// quoted phrase, so nothing in it is syntax (`"` doubled; `*`, `-`, `:`, `NEAR` are text);
  /// and for each shorter term, the index's trigrams it begins (`shortTerms`), any of them.
  /// Nil when no term is served.
  static func matchExpression(_ terms: [String], shortTerms: [[String]] = []) -> String? {
    let phrases =
      terms.filter { $0.unicodeScalars.count >= 3 }.map(phrase)
      + shortTerms.map { "(" + $0.map(phrase).joined(separator: " OR ") + ")" }
    return phrases.isEmpty ? nil : phrases.joined(separator: " AND ")
  }

  private static func phrase(_ text: String) -> String {
    "\"" + text.replacing("\"", with: "\"\"") + "\""
  }

}
