/// `EngineRules` as SQLite triggers on `objects`, rendered from their plan (`WritePlan`) with an
/// exhaustive `switch` over its effects, as PostgreSQL renders it (`PostgresRules`). Names in the
/// rules are checked by `EngineRules.validate()` (letters, digits, `_`), so they are safe inside
/// SQL text.
///
/// What the triggers do is bookkeeping no client can be trusted with: numbering, counters, the
/// parent's last activity, children's readers, cascades. What needs to know the caller (is the
/// parent readable, is the owner the caller) is checked by the engine before it writes, and the
/// managed and fixed fields by `DatastoreClient`. There are no guard triggers against edits made
/// past the engine: on SQLite whoever holds the file may run `sqlite3` on it anyway (README, trust
/// model), and a guard would parse every parent's JSON again on every comment.
enum SQLiteRules {
  /// Bumped when the trigger text below changes, so open files get the new triggers (5: the
  /// owners' children indexes; 6: a count never goes below zero, an edit is dated as its row;
  /// 7: revisions are numbered, and only the first and the latest are kept; 8: the engine's
  /// INSERT writes a new row whole (`newRow`), so no trigger rewrites it, and the indexes the
  /// rules make are partial to their class; 9: a locked parent refuses new children; 10: a
  /// parent's counters live in their own column, `counts`, see `counterColumn`; 11: a child
  /// moves its parent's last activity only forward, an imported one too).
  static let format = 11

  /// A parent's counters (`EngineRules.counterFields`) are kept in their own column, `counts`
  /// (a JSON object), not in `data`: every child's insert rewrites them, and a rewrite of `data`
  /// runs every trigger on `UPDATE OF data` (revisions, search, shape, storage) and every index
  /// on a field of `data`, which was most of a comment's cost (BENCHMARKS W16). Reads select the
  /// two and merge them (`SQLiteEngine.objectColumns`, `StoredObject.merge`); a condition, order or index on a counter reads the
  /// column (`SQLiteEngine.expression(for:table:counters:)`).
  static let counterColumn = "counts"

  /// A millisecond clock in SQL (SQLite 3.40 has no `unixepoch('subsec')`). `now` is fixed for
  /// the length of one statement, triggers included.
  static let now = "CAST(round((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER)"

  /// The canonical pointer text to an object of `className` whose id is the SQL `idExpression`,
  /// byte for byte what `JSONValue.pointer(…).jsonText()` writes, so the index on the pointer
  /// field serves the lookups.
  static func pointer(_ className: String, _ idExpression: String) -> String {
    pointer(className, id: SQL(verbatim: idExpression)).rendered(.sqlite).sql
  }

  /// The same pointer with its id as `SQL` (a column, or a bound value).
  static func pointer(_ className: String, id: SQL) -> SQL {
    "json_object('__type', 'Pointer', 'className', \(literal: className), 'objectId', \(sql: id))"
  }

  static func path(_ field: String) -> String { SQL.quotedLiteral("$." + field) }

  /// A class name as an SQL literal. Queries name their class this way, not as a parameter, so
  /// that the planner can use the indexes partial to that class (`WHERE class = 'Thread'`).
  /// Names are `Validation.isName` names; quotes are doubled all the same.
  static func literal(_ className: String) -> String { SQL.quotedLiteral(className) }

  /// How the engine's INSERT writes a new row of `className` whole, so that no trigger has to
  /// rewrite it: `data` is the SQL of the client's JSON text. A child is inserted from its
  /// parent's row, found by `parentCondition` (as `p`) and given to the row as `parent` says:
  /// its number follows its parent's last one, its pointer is canonical and its readers are
  /// the parent's. A class with a sequence takes the next value (the insert trigger moves the
  /// counter to it); a parent starts with no children, active at its creation.
  /// (`data` is the client's JSON text and `parentId` the parent's id, both bound.)
  struct NewRow {
    var data: SQL
    /// For a parent: its counters, started (`counterColumn`).
    var counts: SQL?
    /// For a child: the parent's row (`p`) it is inserted from.
    var parentCondition: SQL?
    var readers: SQL?
  }

  /// Where a child's row takes its parent's columns from: the parent's row `p` itself, or
  /// read by the parent's rowid among the row's values (`SQLiteEngine.insertTemplate`).
  struct ParentColumns {
    var readers: SQL = "p.readers"
    var objectId: SQL = "p.objectId"
    var counts: SQL = "p.counts"
  }

  static func newRow(
    _ className: String, _ rules: EngineRules, data: SQL, parentId: SQL, now: String,
    parent: ParentColumns = ParentColumns()
  ) -> NewRow {
    // On every insert: the class's effects only, as the plan lists them, not the whole plan.
    newRow(
      WritePlan.insertEffects(of: className, in: rules), data: data, parentId: parentId, now: now,
      parent: parent)
  }
  private static func newRow(
    _ effects: [InsertEffect], data: SQL, parentId: SQL, now: String, parent: ParentColumns
  ) -> NewRow {
    let path = SQLiteEngine.jsonPath
    let now = SQL(verbatim: now)
    var sets: [SQL] = []
    var pointer: [SQL] = []
    var counters: [SQL] = []
    var row = NewRow(data: data)
    for effect in effects {
      switch effect {
      case .nextInSequence(let rule):
        sets.append(
          """
          \(sql: path(rule.field)), \
          coalesce((SELECT value FROM counters WHERE name = \(literal: rule.sequence)), 0) + 1
          """)
      case .startParentCounters(let rule):
        counters += [
          "\(literal: rule.countField), 0", "\(literal: rule.lastNumberField), 0",
          "\(literal: rule.activityField), \(sql: now)",
        ]
      case .requireReadableParent(let child):
        // The engine adds the caller's read access to the condition (`SQLiteEngine.insert`).
        row.parentCondition =
          "p.class = \(literal: child.parentClass) AND p.objectId = \(sql: parentId)"
        pointer.append(
          """
          \(sql: path(child.parentField)), \
          \(sql: SQLiteRules.pointer(child.parentClass, id: parent.objectId))
          """)
      case .inheritParentReaders:
        row.readers = parent.readers
      case .numberFromParent(let child):
        sets.append(
          """
          \(sql: path(child.numberField)), \
          coalesce(json_extract(\(sql: parent.counts), \(sql: path(child.lastNumberField))), 0) + 1
          """)
      // Checked by the engine before it writes (`DatastoreClient`, `SQLiteEngine.insert`): on
      // SQLite the file's holder is trusted (README, trust model), the pair's uniqueness is an
      // index (`pairIndexes`), and the parent's counters are the insert trigger's.
      case .ownedByCaller, .pairOfCaller, .parentFileWritable, .countParentUp,
        .touchParentActivity, .refuseWhileParentLocked:
        break
      }
    }
    sets += pointer
    if !counters.isEmpty {
      row.counts = "json_object(\(sql: SQL.joined(counters, separator: ", ")))"
    }
    if !sets.isEmpty {
      row.data = "json_set(\(sql: data), \(sql: SQL.joined(sets, separator: ", ")))"
    }
    return row
  }

  /// Every trigger for `rules`, as `CREATE TRIGGER` statements named `rule_…`, rendered from
  /// their plan (`WritePlan`).
  static func triggers(for rules: EngineRules) -> [String] {
    let plan = rules.plan
    return plan.classes.flatMap { className in
      [insertTrigger(className, plan), deleteTrigger(className, plan)]
        + readersTriggers(className, plan)
    }.compactMap { $0 } + changeTriggers(for: plan)
      + plan.update.compactMap { step in
        switch step.effect {
        case .keepRevision(let rule, let tombstone): revisionTrigger(rule, skipping: tombstone)
        // What a member's update keeps is the engine's (`SQLiteEngine.update`) and the client's
        // (`DatastoreClient`): there are no guard triggers on SQLite (see above).
        case .readersStayTheParents, .writersStayTheOwner, .tombstoneIsFinal, .pairKeepsItsACL:
          nil
        }
      }
  }

  /// The change feed's triggers (`Change`): a row per object inserted, changed or deleted, with
  /// its readers at that moment, the parent of a child and, for a deletion, its number. Only
  /// updates by a client are recorded (they move `updateDate`): the rules' own bookkeeping (a
  /// new row's number, a parent's counters, children's readers following their parent's) would
  /// triple the feed for nothing a reader needs.
  static func changeTriggers(for rules: EngineRules) -> [String] {
    changeTriggers(for: rules.plan)
  }

  static func changeTriggers(for plan: WritePlan) -> [String] {
    let numbers = plan.feed.compactMap { step -> (String, String)? in
      switch step.effect {
      case .number(let field): (step.className, field)
      case .parent: nil
      }
    }
    func parent(_ row: String) -> String {
      let cases = plan.feed.compactMap { step -> String? in
        switch step.effect {
        case .parent(let rule):
          "WHEN '\(step.className)' THEN json_extract(\(row).data, '$.\(rule.parentField).objectId')"
        case .number: nil
        }
      }
      return cases.isEmpty ? "NULL" : "CASE \(row).class \(cases.joined(separator: " ")) END"
    }
    // A child's readers are its parent's: the engine's INSERT takes them from the parent
    // (`newRow`) and the readers trigger keeps them so.
    func readers(_ row: String) -> String { "\(row).readers" }
    let numberCases = numbers.map { "WHEN '\($0.0)' THEN json_extract(OLD.data, '$.\($0.1)')" }
    let number =
      numberCases.isEmpty ? "NULL" : "CASE OLD.class \(numberCases.joined(separator: " ")) END"
    return [
      """
      CREATE TRIGGER rule_change_insert AFTER INSERT ON objects BEGIN
        INSERT INTO changes(class, objectId, kind, parentId, readers)
        VALUES (NEW.class, NEW.objectId, 1, \(parent("NEW")), \(readers("NEW")));
      END
      """,
      """
      CREATE TRIGGER rule_change_update AFTER UPDATE ON objects
      WHEN NEW.updateDate IS NOT OLD.updateDate BEGIN
        INSERT INTO changes(class, objectId, kind, parentId, readers)
        VALUES (NEW.class, NEW.objectId, 2, \(parent("NEW")), \(readers("NEW")));
      END
      """,
      """
      CREATE TRIGGER rule_change_delete AFTER DELETE ON objects BEGIN
        INSERT INTO changes(class, objectId, kind, parentId, number, readers)
        VALUES (OLD.class, OLD.objectId, 3, \(parent("OLD")), \(number), OLD.readers);
      END
      """,
    ]
  }

  /// After an update that changes a revisioned field: the old values become a revision (dated
  /// when they were written, numbered after the last) and the object gets its edit date; of its
  /// revisions only the first and the latest `Revision.kept - 1` stay. A tombstone is no edit.
  private static func revisionTrigger(_ rule: RevisionRule, skipping moderation: ModerationRule?)
    -> String
  {
    let changed = rule.fields.map {
      "json_extract(OLD.data, \(path($0))) IS NOT json_extract(NEW.data, \(path($0)))"
    }.joined(separator: " OR ")
    let tombstone =
      moderation.map { " AND json_type(NEW.data, \(path($0.markField))) IS NULL" } ?? ""
    let old = rule.fields.map { "'\($0)', json_extract(OLD.data, \(path($0)))" }
      .joined(separator: ", ")
    return """
      CREATE TRIGGER rule_revision_\(rule.className) AFTER UPDATE OF data ON objects
      WHEN NEW.class = '\(rule.className)'\(tombstone) AND (\(changed)) BEGIN
      INSERT INTO revisions(object, date, data, number) VALUES (OLD.objectId,
        coalesce(json_extract(OLD.data, \(path(rule.editDateField))), OLD.createDate),
        json_object(\(old)), coalesce((SELECT number FROM revisions WHERE object = OLD.objectId
          ORDER BY id DESC LIMIT 1), 0) + 1);
      DELETE FROM revisions WHERE object = OLD.objectId
        AND id > (SELECT min(id) FROM revisions WHERE object = OLD.objectId)
        AND id < (SELECT id FROM revisions WHERE object = OLD.objectId
          ORDER BY id DESC LIMIT 1 OFFSET \(Revision.kept - 2));
      UPDATE objects SET data = json_set(data, \(path(rule.editDateField)), NEW.updateDate)
        WHERE id = NEW.id;
      END
      """
  }

  /// After insert: the parent's counters (a parent that is not there refuses the child) and the
  /// sequence. The new row itself is written whole by the engine's INSERT (`newRow`).
  private static func insertTrigger(_ className: String, _ plan: WritePlan) -> String? {
    var steps: [String] = []
    var parent: ChildRule?
    var requireParent = false
    var parentSets: [String] = []
    var numbered: ChildRule?
    var locks: [FlagRule] = []
    for effect in plan.insert(of: className) {
      switch effect {
      case .nextInSequence(let rule):
        steps.append(
          """
          INSERT INTO counters(name, value) VALUES ('\(rule.sequence)', 1)
            ON CONFLICT(name) DO UPDATE SET value = value + 1;
          """)
      case .requireReadableParent(let child):
        parent = child
        requireParent = true
      case .refuseWhileParentLocked(let child, let flag):
        parent = child
        locks.append(flag)
      case .numberFromParent(let child):
        parent = child
        numbered = child
        parentSets.append(
          "\(path(child.lastNumberField)), coalesce(json_extract(counts, \(path(child.lastNumberField))), 0) + 1"
        )
      case .countParentUp(let child):
        parent = child
        parentSets.append(
          "\(path(child.countField)), coalesce(json_extract(counts, \(path(child.countField))), 0) + 1"
        )
      case .touchParentActivity(let child):
        parent = child
        // The later of the two: an imported child (older than the parent's last) leaves it.
        parentSets.append(
          "\(path(child.activityField)), max(coalesce(json_extract(counts, \(path(child.activityField))), 0), NEW.createDate)"
        )
      // The new row's own fields and readers are `newRow`'s; the caller's checks the engine's.
      case .ownedByCaller, .pairOfCaller, .parentFileWritable, .startParentCounters,
        .inheritParentReaders:
        break
      }
    }
    if let child = parent {
      let parentId = "json_extract(NEW.data, '$.\(child.parentField).objectId')"
      let refusal = TriggerRefusal(.notFound, field: child.parentField).sql
      // A locked parent is not counted up (so the common case costs no lookup), then said.
      let free = locks.map { "json_type(data, \(path($0.field))) IS NULL" }
        .joined(separator: " AND ")
      let unlocked = locks.isEmpty ? "" : " AND \(free)"
      let lockedParent =
        "SELECT 1 FROM objects WHERE class = '\(child.parentClass)' AND objectId = \(parentId)"
        + " AND NOT (\(free))"
      let locked = TriggerRefusal(.noAccess, reason: .parentLocked(field: child.parentField)).sql
      // A process of a forum from before format 10, still running when the board was upgraded,
      // numbers a child from the copy its parent's `data` keeps (`counterMoves`), which no
      // longer moves: a number at or below the parent's last, one past that copy, is its, and
      // refused rather than repeated. (Every other child is numbered past the last, so the
      // first test is false and the parent's `data` is not read.)
      let stale =
        numbered.map { rule in
          let number = "json_extract(NEW.data, \(path(rule.numberField)))"
          return
            " AND NOT (\(number) <= coalesce(json_extract(counts, \(path(rule.lastNumberField))), 0)"
            + " AND coalesce(json_extract(data, \(path(rule.lastNumberField))) + 1 = \(number), 0))"
        } ?? ""
      if !parentSets.isEmpty {
        steps.append(
          """
          UPDATE objects SET counts = json_set(coalesce(counts, '{}'),
              \(parentSets.joined(separator: ",\n    ")))
            WHERE class = '\(child.parentClass)' AND objectId = \(parentId)\(unlocked)\(stale);
          """)
        if !locks.isEmpty {
          steps.append("SELECT \(locked) WHERE changes() = 0 AND EXISTS (\(lockedParent));")
        }
        if let numbered {
          let renumbered = TriggerRefusal(.systemError, field: numbered.numberField).sql
          steps.append(
            """
            SELECT \(renumbered) WHERE changes() = 0 AND EXISTS (SELECT 1 FROM objects
              WHERE class = '\(child.parentClass)' AND objectId = \(parentId));
            """)
        }
        // `changes()` in a trigger counts the trigger's last statement: no parent was updated.
        if requireParent { steps.append("SELECT \(refusal) WHERE changes() = 0;") }
      } else if !locks.isEmpty {
        steps.append("SELECT \(locked) WHERE EXISTS (\(lockedParent));")
      }
      if parentSets.isEmpty && requireParent {
        steps.append(
          """
          SELECT \(refusal) WHERE NOT EXISTS (SELECT 1 FROM objects
            WHERE class = '\(child.parentClass)' AND objectId = \(parentId));
          """)
      }
    }
    guard !steps.isEmpty else { return nil }
    return """
      CREATE TRIGGER rule_insert_\(className) AFTER INSERT ON objects
      WHEN NEW.class = '\(className)' BEGIN
      \(steps.joined(separator: "\n"))
      END
      """
  }

  /// After delete: a child counts its parent down; a parent takes its children and file along.
  private static func deleteTrigger(_ className: String, _ plan: WritePlan) -> String? {
    let steps = plan.delete(of: className).map { effect in
      switch effect {
      case .countParentDown(let child, let clampAtZero):
        let count = "coalesce(json_extract(counts, \(path(child.countField))), 0) - 1"
        return """
          UPDATE objects SET counts = json_set(coalesce(counts, '{}'),
              \(path(child.countField)),
              \(clampAtZero ? "max(0, \(count))" : count))
            WHERE class = '\(child.parentClass)'
              AND objectId = json_extract(OLD.data, '$.\(child.parentField).objectId');
          """
      case .deleteChildren(let rule):
        return """
          DELETE FROM objects WHERE class = '\(rule.childClass)'
            AND json_extract(data, \(path(rule.parentField))) = \(pointer(className, "OLD.objectId"));
          """
      case .deleteFile(_, let file):
        return "DELETE FROM files WHERE name = json_extract(OLD.data, \(path(file)));"
      }
    }
    guard !steps.isEmpty else { return nil }
    return """
      CREATE TRIGGER rule_delete_\(className) AFTER DELETE ON objects
      WHEN OLD.class = '\(className)' BEGIN
      \(steps.joined(separator: "\n"))
      END
      """
  }

  /// When a parent's readers change, its children's follow.
  private static func readersTriggers(_ className: String, _ plan: WritePlan) -> [String] {
    plan.readersChange(of: className).map { effect in
      switch effect {
      case .childrenFollow(let rule):
        """
        CREATE TRIGGER rule_readers_\(className)_\(rule.childClass) AFTER UPDATE OF readers ON objects
        WHEN NEW.class = '\(className)' AND NEW.readers IS NOT OLD.readers BEGIN
        UPDATE objects SET readers = NEW.readers WHERE class = '\(rule.childClass)'
          AND json_extract(data, \(path(rule.parentField))) = \(pointer(className, "NEW.objectId"));
        END
        """
      }
    }
  }

  /// One object per pair (`PairRule`): a unique index on the pair's key, partial to the
  /// class (NULLs never collide). The engine checks first and says so;
  /// the index holds even for a writer that does not.
  /// For each child class with an owner: its children by owner, parent and number, so that "my
  /// comments in this thread after my read position" is counted in the index, without reading a
  /// row (an unread count subtracts them from all comments after the position).
  static func ownerIndexes(for rules: EngineRules) -> [String] {
    rules.children.compactMap { child in
      guard let owner = rules.owner(of: child.childClass) else { return nil }
      return """
        CREATE INDEX IF NOT EXISTS "\(ownerIndexName(child, owner))"
        ON objects(class, json_extract(data, '$.\(owner.field).objectId'),
          json_extract(data, \(path(child.parentField))), json_extract(data, \(path(child.numberField))))
        WHERE class = \(literal(child.childClass))
        """
    }
  }

  static func ownerIndexName(_ child: ChildRule, _ owner: OwnerRule) -> String {
    "objects_owner_\(child.childClass)_\(owner.field)_\(child.parentField)_\(child.numberField)"
  }

  static func pairIndexes(for rules: EngineRules) -> [String] {
    rules.plan.insert.compactMap { step in
      switch step.effect {
      case .pairOfCaller(let rule):
        """
        CREATE UNIQUE INDEX IF NOT EXISTS "objects_unique_\(rule.className)_\(rule.pairField)"
        ON objects(class, json_extract(data, '$.\(rule.pairField)'))
        WHERE class = \(literal(rule.className))
        """
      case .nextInSequence, .ownedByCaller, .parentFileWritable, .startParentCounters,
        .requireReadableParent, .inheritParentReaders, .numberFromParent, .countParentUp,
        .touchParentActivity, .refuseWhileParentLocked:
        nil
      }
    }
  }

  /// Existing rows brought in line with `rules` when they are installed on a file written before
  /// them: children take their parent's readers; a parent's counters are copied from `data` into
  /// `counts` (rules before format 10 kept them in `data`).
  static func alignments(for rules: EngineRules) -> [String] {
    counterMoves(for: rules) + readerAlignments(for: rules)
  }

  /// Each parent's counters copied from `data` into `counts`, for a row that has none there yet
  /// (so that running it again never puts back an older count). `data` is left as it is: its
  /// copies are never read again (a read merges `counts` over them: `StoredObject.merge`), and
  /// rewriting it would run the triggers on `UPDATE OF data`, whose shape check refuses a row
  /// past today's limits that an older forum kept (the whole move, and the board's next open,
  /// would fail), and rewrite every thread of a big board.
  private static func counterMoves(for rules: EngineRules) -> [String] {
    Set(rules.children.map(\.parentClass)).sorted().map { parentClass in
      let fields = rules.counterFields(of: parentClass).sorted()
      let pairs = fields.map { "'\($0)', json_extract(data, \(path($0)))" }
      let present = fields.map { "json_type(data, \(path($0))) IS NOT NULL" }
        .joined(separator: " OR ")
      return """
        UPDATE objects SET counts = json_object(\(pairs.joined(separator: ", ")))
        WHERE class = \(literal(parentClass)) AND counts IS NULL AND json_valid(data)
          AND (\(present))
        """
    }
  }

  private static func readerAlignments(for rules: EngineRules) -> [String] {
    rules.plan.insert.compactMap { step in
      switch step.effect {
      case .inheritParentReaders(let child):
        let parentReaders =
          "(SELECT p.readers FROM objects p WHERE p.class = '\(child.parentClass)' "
          + "AND p.objectId = json_extract(objects.data, '$.\(child.parentField).objectId'))"
        return """
          UPDATE objects SET readers = \(parentReaders)
          WHERE class = '\(child.childClass)' AND \(parentReaders) IS NOT NULL
            AND readers IS NOT \(parentReaders)
          """
      case .nextInSequence, .ownedByCaller, .pairOfCaller, .parentFileWritable,
        .startParentCounters, .requireReadableParent, .numberFromParent, .countParentUp,
        .touchParentActivity, .refuseWhileParentLocked:
        return nil
      }
    }
  }
}
