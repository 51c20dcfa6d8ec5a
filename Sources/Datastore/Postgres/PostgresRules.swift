/// The engine rules in the shape the PostgreSQL triggers need, and the triggers themselves.
///
/// Two triggers per event on `forum.objects`, fired in name order:
/// - `a_guard` runs as the caller. When the caller is a member (not the owner's bookkeeping), it
///   keeps every managed field, the readers of a child, and the writers and author of an owned
///   object as they were: a member with psql cannot forge numbers, counters or authorship.
/// - `b_rules` runs as the schema owner (`SECURITY DEFINER`, `search_path` pinned): numbering,
///   the owner check, and a child's effect on its parent (readers, number, counters, activity),
///   and the cascades when a parent goes. The caller's own principals (from `session_user`)
///   decide whether the parent may be read.
///
/// What each write does is the rules' plan (`WritePlan`), rendered here with an exhaustive
/// `switch` over its effects, as SQLite renders it (`SQLiteRules`). Where rows live (the private
/// table, issue 22), `forum.moderate` and `forum.set_flag` are PostgreSQL's own and read the
/// rules themselves.
struct PostgresRules: Equatable {
  /// The rules as declared (`EngineRules`, the one declaration), and what they compile to.
  let rules: EngineRules
  let plan: WritePlan

  init(_ rules: EngineRules) {
    self.rules = rules
    plan = rules.plan
  }

  // Where rows live, `forum.moderate` and `forum.set_flag` read these rules as declared.
  var children: [ChildRule] { rules.children }
  /// Classes private to two users, one object per pair (`PairRule`).
  var pairs: [PairRule] { rules.pairs }
  /// What moderators may take down.
  var moderation: [ModerationRule] { rules.moderation }
  /// Flags only a role and the board's owner set (`FlagRule`).
  var flags: [FlagRule] { rules.flags }

  /// Every field of `className` a member's write may not set or change: the rules' own list
  /// (`EngineRules.keptFields`), and a user's handle and identity.
  func managed(_ className: String) -> [String] {
    var fields = plan.kept(of: className).filter(\.guarded).map(\.field)
    if className == User.className { fields += ["userName", "authData"] }
    var seen = Set<String>()
    return fields.filter { seen.insert($0).inserted }
  }

  /// Classes whose rows live in the owner-only `forum.private_objects` (issue 22): pair classes
  /// (readable by their two users only) and, under them, their children, whose readers are their
  /// parent's.
  var privateClasses: Set<String> {
    var found = Set(pairs.map(\.className))
    var grew = true
    while grew {
      grew = false
      for child in children
      where found.contains(child.parentClass) && !found.contains(child.childClass) {
        found.insert(child.childClass)
        grew = true
      }
    }
    return found
  }

  /// The table holding the rows of `className`.
  func table(_ className: String) -> String {
    privateClasses.contains(className) ? "forum.private_objects" : "forum.objects"
  }

  var classes: [String] {
    Set(plan.classes + [User.className]).sorted()
  }

  /// Changes whenever the generated SQL would: a connection compares it with the installed one.
  var fingerprint: String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in triggerSQL.utf8 {
      hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return String(hash, radix: 16)
  }

  // MARK: SQL

  private static func literal(_ text: String) -> String {
    "'" + text.replacing("'", with: "''") + "'"
  }

  private static func array(_ items: [String]) -> String {
    "ARRAY[" + items.map(literal).joined(separator: ", ") + "]::text[]"
  }

  private static func pointer(_ className: String, _ idExpression: String) -> String {
    "jsonb_build_object('__type', 'Pointer', 'className', \(literal(className)), 'objectId', \(idExpression))"
  }

  /// The guard of `forum.objects`; for `forum.private_objects` (written by the owner's
  /// functions only) a client's write is one made at trigger depth 1 by another session than the
  /// schema owner's: `forum.update_object` runs as the owner, so `forum.is_bookkeeping()` would
  /// let everything through.
  private func guardSQL(name: String, bookkeeping: String) -> String {
    """
    CREATE OR REPLACE FUNCTION forum.\(name)() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      -- A write by a client (or a moderator) moves the date, by a millisecond if the clock has
      -- not, so the feed records it; the rules' own bookkeeping (a parent's counters, children's
      -- readers), made from inside another trigger, does not, as on SQLite.
      -- `forum.moderate` dates its tombstone and the row with one clock reading. Nor does
      -- an import's (`forum.is_moving`: a parent counted up for the children it brought).
      IF pg_trigger_depth() = 1
         AND NOT (\(bookkeeping) AND NEW.update_date > OLD.update_date) THEN
        IF NOT forum.is_moving() THEN
          NEW.update_date := greatest(forum.now_ms(), OLD.update_date + 1);
        END IF;
      END IF;
      IF \(bookkeeping) THEN RETURN NEW; END IF;
    \(guardBody)
      RETURN NEW;
    END
    $$;
    """
  }

  var triggerSQL: String {
    guardSQL(name: "objects_guard", bookkeeping: "forum.is_bookkeeping()")
      + guardSQL(
        name: "private_guard", bookkeeping: "(pg_trigger_depth() > 1 OR forum.is_trusted())")
      + privateSQL + """

        CREATE OR REPLACE FUNCTION forum.objects_before_insert() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        AS $$
        DECLARE
          me text := forum.caller_id();
          now_ms bigint := forum.now_ms();
          parent record;
          number bigint;
          -- What the client sent, before the managed fields are taken out of it.
          claimed jsonb := NEW.data;
          -- The schema's owner (tests planting rows, administration) is trusted with authorship and
          -- with parents it names; the bookkeeping (numbers, counters) still runs.
          trusted boolean := session_user = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace
                                             WHERE nspname = 'forum');
        BEGIN
          -- A row changing tables keeps what it had.
          IF forum.is_moving() THEN RETURN NEW; END IF;
          NEW.create_date := now_ms;
          NEW.update_date := now_ms;
        \(insertBody)
          RETURN NEW;
        END
        $$;

        CREATE OR REPLACE FUNCTION forum.objects_after_delete() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        AS $$
        BEGIN
          -- A row changing tables keeps its children, revisions and read positions.
          IF forum.is_moving() THEN RETURN NULL; END IF;
        \(deleteBody)
          RETURN NULL;
        END
        $$;

        CREATE OR REPLACE FUNCTION forum.objects_after_update() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        AS $$
        BEGIN
        \(updateBody)
          RETURN NULL;
        END
        $$;

        CREATE OR REPLACE FUNCTION forum.objects_revise() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        AS $$
        BEGIN
        \(reviseBody)
          RETURN NEW;
        END
        $$;

        CREATE OR REPLACE FUNCTION forum.moderate(target_class text, target_id text) RETURNS void
        LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        AS $$
        DECLARE
          old_file text;
          stamp bigint := forum.now_ms();
        BEGIN
        \(moderateBody)
          RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'nothing of this class is moderated';
        END
        $$;

        -- The change feed: at commit (a deferred trigger), under one row lock held to the end of the
        -- commit, so sequence numbers follow commit order and a reader that saw N has seen every
        -- row below N. The notification carries nothing: any listener would see it, whatever the
        -- row-level security; readers read the feed again through it.
        CREATE OR REPLACE FUNCTION forum.objects_feed() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
        AS $$
        DECLARE
          row_class text;
          row_id text;
          row_data jsonb;
          row_readers text[];
          change_kind smallint;
          row_seq bigint;
        BEGIN
          -- A row of an owner-only table: members can neither take nor hold this lock.
          PERFORM 1 FROM forum.feed_lock WHERE id = 1 FOR UPDATE;
          IF TG_OP = 'DELETE' THEN
            row_class := OLD.class; row_id := OLD.object_id; row_data := OLD.data;
            row_readers := OLD.readers; change_kind := 3;
          ELSE
            row_class := NEW.class; row_id := NEW.object_id; row_data := NEW.data;
            -- A row that changed tables (`forum.objects_move`) was updated, not created.
            change_kind := CASE WHEN TG_OP = 'INSERT' AND TG_NARGS = 0 THEN 1 ELSE 2 END;
            IF TG_TABLE_NAME = 'private_objects' THEN
              SELECT readers INTO row_readers FROM forum.private_objects WHERE id = NEW.id;
            ELSE
              SELECT readers INTO row_readers FROM forum.objects WHERE id = NEW.id;
            END IF;
            IF NOT FOUND THEN row_readers := NEW.readers; END IF;
          END IF;
          IF TG_TABLE_NAME = 'private_objects' THEN
            -- One row per reader, each found from that reader's own rows (`forum.private_changes`).
            row_seq := nextval('forum.change_seq');
            INSERT INTO forum.private_changes(reader, seq, class, object_id, kind, parent_id, number,
                                              readers)
            SELECT DISTINCT r, row_seq, row_class, row_id, change_kind, (\(feedParent))::text,
              CASE WHEN change_kind = 3 THEN (\(feedNumber))::bigint END, row_readers
            FROM unnest(row_readers) r;
          ELSE
            INSERT INTO forum.changes(seq, class, object_id, kind, parent_id, number, readers)
            VALUES (nextval('forum.change_seq'), row_class, row_id, change_kind,
                    (\(feedParent))::text, CASE WHEN change_kind = 3 THEN (\(feedNumber))::bigint END,
                    row_readers);
          END IF;
          PERFORM pg_notify('forum_changes', '');
          RETURN NULL;
        END
        $$;

        REVOKE ALL ON FUNCTION forum.objects_guard(), forum.private_guard(),
          forum.objects_before_insert(),
          forum.objects_after_delete(), forum.objects_after_update(), forum.objects_revise(),
          forum.moderate(text, text), forum.objects_feed() FROM PUBLIC;
        GRANT EXECUTE ON FUNCTION forum.moderate(text, text) TO forum_member;\(flagSQL)\(stewardSQL)

        \(objectTriggers(on: "objects", guardFunction: "objects_guard"))
        \(objectTriggers(on: "private_objects", guardFunction: "private_guard"))
        DROP TRIGGER IF EXISTS z_keys ON forum.private_objects;
        CREATE TRIGGER z_keys BEFORE INSERT OR UPDATE ON forum.private_objects
          FOR EACH ROW EXECUTE FUNCTION forum.private_keep_keys();
        DROP TRIGGER IF EXISTS a_route ON forum.objects;
        CREATE TRIGGER a_route BEFORE INSERT ON forum.objects
          FOR EACH ROW EXECUTE FUNCTION forum.objects_route();
        """
  }

  /// The triggers of a table of objects: public rows (`forum.objects`) and private ones
  /// (`forum.private_objects`) run the same rules, each with its own update guard.
  private func objectTriggers(on table: String, guardFunction: String) -> String {
    let names = privateClasses.sorted().map(PostgresRules.literal).joined(separator: ", ")
    let moveCondition =
      table == "objects"
      ? "NOT ('*' = ANY(NEW.readers))"
      : "'*' = ANY(NEW.readers)" + (names.isEmpty ? "" : " AND NEW.class NOT IN (\(names))")
    return """
      DROP TRIGGER IF EXISTS e_feed_insert ON forum.\(table);
      CREATE CONSTRAINT TRIGGER e_feed_insert AFTER INSERT ON forum.\(table)
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (NOT forum.is_moving() OR pg_trigger_depth() = 0)
        EXECUTE FUNCTION forum.objects_feed();
      DROP TRIGGER IF EXISTS e_feed_move ON forum.\(table);
      CREATE CONSTRAINT TRIGGER e_feed_move AFTER INSERT ON forum.\(table)
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (forum.is_moving() AND pg_trigger_depth() = 1)
        EXECUTE FUNCTION forum.objects_feed('moved');
      DROP TRIGGER IF EXISTS y_move ON forum.\(table);
      CREATE TRIGGER y_move BEFORE UPDATE OF readers ON forum.\(table)
        FOR EACH ROW WHEN (\(moveCondition))
        EXECUTE FUNCTION forum.objects_move();
      DROP TRIGGER IF EXISTS e_feed_update ON forum.\(table);
      CREATE CONSTRAINT TRIGGER e_feed_update AFTER UPDATE ON forum.\(table)
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (OLD.update_date IS DISTINCT FROM NEW.update_date)
        EXECUTE FUNCTION forum.objects_feed();
      DROP TRIGGER IF EXISTS e_feed_delete ON forum.\(table);
      CREATE CONSTRAINT TRIGGER e_feed_delete AFTER DELETE ON forum.\(table)
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NOT forum.is_moving())
        EXECUTE FUNCTION forum.objects_feed();
      DROP TRIGGER IF EXISTS a_guard ON forum.\(table);
      CREATE TRIGGER a_guard BEFORE UPDATE ON forum.\(table)
        FOR EACH ROW EXECUTE FUNCTION forum.\(guardFunction)();
      DROP TRIGGER IF EXISTS a_revise ON forum.\(table);
      CREATE TRIGGER a_revise BEFORE UPDATE ON forum.\(table)
        FOR EACH ROW EXECUTE FUNCTION forum.objects_revise();
      DROP TRIGGER IF EXISTS b_rules ON forum.\(table);
      CREATE TRIGGER b_rules BEFORE INSERT ON forum.\(table)
        FOR EACH ROW EXECUTE FUNCTION forum.objects_before_insert();
      DROP TRIGGER IF EXISTS c_cascade ON forum.\(table);
      CREATE TRIGGER c_cascade AFTER DELETE ON forum.\(table)
        FOR EACH ROW EXECUTE FUNCTION forum.objects_after_delete();
      DROP TRIGGER IF EXISTS d_follow ON forum.\(table);
      CREATE TRIGGER d_follow AFTER UPDATE OF readers ON forum.\(table)
        FOR EACH ROW WHEN (OLD.readers IS DISTINCT FROM NEW.readers)
        EXECUTE FUNCTION forum.objects_after_update();
      """
  }

  private var privateList: String {
    let names = privateClasses.sorted().map(PostgresRules.literal)
    return names.isEmpty ? "NULL" : names.joined(separator: ", ")
  }

  /// The parent id of a private row (`NEW` in a trigger), as its reader keys name it: a child
  /// of any class may be private (a comment of a private thread).
  private var privateParent: String {
    let cases = feedParentCases
    return cases.isEmpty ? "NULL::text" : "CASE row_class \(cases.joined(separator: " ")) END"
  }

  /// A child row's parent id (`row_class`, `row_data`), one case per child class (`FeedEffect`).
  private var feedParentCases: [String] {
    plan.feed.compactMap { step in
      switch step.effect {
      case .parent(let rule):
        "WHEN \(PostgresRules.literal(step.className)) THEN row_data->\(PostgresRules.literal(rule.pointerField))->>'objectId'"
      case .number: nil
      }
    }
  }

  /// `forum.private_home` for a child class: private unless its parent is a public row.
  private var childHomes: String {
    children.filter { !privateClasses.contains($0.childClass) }.map {
      """
        IF class_name = \(PostgresRules.literal($0.childClass)) THEN
          RETURN NOT EXISTS (SELECT 1 FROM forum.objects
            WHERE class = \(PostgresRules.literal($0.parentClass))
              AND object_id = new_data->\(PostgresRules.literal($0.pointerField))->>'objectId');
        END IF;
      """
    }.joined(separator: "\n")
  }

  /// In `forum.objects_move`: the moved row's children get its readers, which moves them too.
  private func moveChildren(from table: String) -> String {
    plan.readersChange.map { step in
      switch step.effect {
      case .childrenFollow(let rule):
        let match =
          table == "forum.private_objects"
          ? "parent_id = NEW.object_id"
          : "data->\(PostgresRules.literal(rule.pointerField)) = \(PostgresRules.pointer(step.className, "NEW.object_id"))"
        return """
              IF NEW.class = \(PostgresRules.literal(step.className)) THEN
                UPDATE \(table) SET readers = NEW.readers
                WHERE class = \(PostgresRules.literal(rule.childClass)) AND \(match);
              END IF;
          """
      }
    }.joined(separator: "\n")
  }

  /// Writing private rows: `forum.insert_object` (the engine's way; `INSERT INTO forum.objects`
  /// of a private class is routed to it), the reader keys kept by a trigger, and one object id
  /// per board across both tables.
  private var privateSQL: String {
    """
    CREATE OR REPLACE FUNCTION forum.private_parent(row_class text, row_data jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
    AS $$ SELECT \(privateParent) $$;

    CREATE OR REPLACE FUNCTION forum.private_keep_keys() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      NEW.parent_id := forum.private_parent(NEW.class, NEW.data);
      NEW.reader_keys := forum.reader_keys(NEW.class, NEW.parent_id, NEW.object_id, NEW.readers);
      RETURN NEW;
    END
    $$;

    -- Whether a new row belongs in forum.private_objects: a private class, readers without
    -- '*', or a child whose parent is not a public row (a child has its parent's readers and
    -- lives where its parent does). Only the public table is looked up.
    CREATE OR REPLACE FUNCTION forum.private_home(class_name text, new_readers text[],
                                                  new_data jsonb) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF class_name IN (\(privateList)) THEN RETURN true; END IF;
    \(childHomes)
      RETURN NOT ('*' = ANY(coalesce(new_readers, '{}'::text[])));
    END
    $$;

    -- True inside `forum.objects_move` (issue 22): a row changing tables keeps its dates,
    -- numbers and counters, and its children and feed rows are not deleted. The setting is
    -- compared with a secret members cannot read, so setting it by hand changes nothing.
    CREATE OR REPLACE FUNCTION forum.is_moving() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      given text := current_setting('forum.moving', true);
    BEGIN
      IF given IS NULL OR given = '' THEN RETURN false; END IF;
      RETURN EXISTS (SELECT 1 FROM forum.secrets WHERE name = 'move_key' AND value = given);
    END
    $$;

    -- A new private row (a member's INSERT INTO forum.objects of one is routed here).
    CREATE OR REPLACE FUNCTION forum.insert_object(class_name text, target text,
      new_readers text[], new_writers text[], new_data jsonb)
    RETURNS SETOF forum.private_objects
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      new_id bigint;
    BEGIN
      IF class_name IS NULL OR (class_name = 'user' AND NOT forum.is_trusted())
         OR NOT forum.private_home(class_name, new_readers, new_data) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = 'className';
      END IF;
      IF EXISTS (SELECT 1 FROM forum.objects WHERE object_id = target) THEN
        RAISE EXCEPTION USING ERRCODE = '23505', MESSAGE = 'objectId already exists';
      END IF;
      INSERT INTO forum.private_objects(class, object_id, create_date, update_date, readers,
                                        writers, data)
      VALUES (class_name, target, 0, 0, new_readers, new_writers, new_data)
      RETURNING id INTO new_id;
      RETURN QUERY SELECT o.* FROM forum.private_objects o
        WHERE o.id = new_id AND (forum.is_trusted() OR o.readers && forum.principals());
    END
    $$;

    -- The engine's insert of a row whose table it cannot tell (a child, or private readers):
    -- the row goes where `forum.private_home` says, and comes back if the caller may read it.
    CREATE OR REPLACE FUNCTION forum.insert_row(class_name text, target text,
      new_readers text[], new_writers text[], new_data jsonb)
    RETURNS TABLE(class text, object_id text, create_date bigint, update_date bigint,
                  readers text[], writers text[], data jsonb)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      new_id bigint;
    BEGIN
      IF class_name IS NULL OR (class_name = 'user' AND NOT forum.is_trusted()) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = 'className';
      END IF;
      IF forum.private_home(class_name, new_readers, new_data) THEN
        RETURN QUERY SELECT p.class, p.object_id, p.create_date, p.update_date, p.readers,
            p.writers, p.data
          FROM forum.insert_object(class_name, target, new_readers, new_writers, new_data) p;
        RETURN;
      END IF;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      VALUES (class_name, target, new_readers, new_writers, new_data)
      RETURNING id INTO new_id;
      RETURN QUERY SELECT o.class, o.object_id, o.create_date, o.update_date, o.readers,
          o.writers, o.data
        FROM forum.objects o
        WHERE o.id = new_id AND (forum.is_trusted() OR o.readers && forum.principals());
    END
    $$;

    CREATE OR REPLACE FUNCTION forum.objects_route() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF forum.is_moving() THEN RETURN NEW; END IF;
      IF forum.private_home(NEW.class, NEW.readers, NEW.data) THEN
        PERFORM 1 FROM forum.insert_object(NEW.class, NEW.object_id, NEW.readers, NEW.writers,
                                           NEW.data);
        RETURN NULL;
      END IF;
      IF EXISTS (SELECT 1 FROM forum.private_objects WHERE object_id = NEW.object_id) THEN
        RAISE EXCEPTION USING ERRCODE = '23505', MESSAGE = 'objectId already exists';
      END IF;
      RETURN NEW;
    END
    $$;

    -- A row whose readers gain or lose '*' changes tables (issue 22: no member-readable table
    -- holds a row some members may not read), before the UPDATE would write it: the row as
    -- the guard and the revision trigger left it goes to the other table, its children follow
    -- (their readers are its), and the UPDATE itself writes nothing. Dates, numbers and
    -- counters stay; revisions and read positions are kept by object id; the feed records one
    -- update of the row itself (`e_feed_move`; its children's readers follow it without one,
    -- as on SQLite). `forum.moved` names the row for the engine, which reads it back.
    CREATE OR REPLACE FUNCTION forum.objects_move() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      was text := coalesce(current_setting('forum.moving', true), '');
    BEGIN
      PERFORM set_config('forum.moving',
        (SELECT value FROM forum.secrets WHERE name = 'move_key'), true);
      IF TG_TABLE_NAME = 'objects' THEN
        DELETE FROM forum.objects WHERE id = OLD.id;
        INSERT INTO forum.private_objects(class, object_id, create_date, update_date, readers,
                                          writers, data, creator)
        VALUES (NEW.class, NEW.object_id, NEW.create_date, NEW.update_date, NEW.readers,
                NEW.writers, NEW.data, NEW.creator);
    \(moveChildren(from: "forum.objects"))
      ELSE
        DELETE FROM forum.private_objects WHERE id = OLD.id;
        INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers,
                                  data, creator)
        VALUES (NEW.class, NEW.object_id, NEW.create_date, NEW.update_date, NEW.readers,
                NEW.writers, NEW.data, NEW.creator);
    \(moveChildren(from: "forum.private_objects"))
      END IF;
      PERFORM set_config('forum.moving', was, true);
      IF pg_trigger_depth() = 1 THEN
        PERFORM set_config('forum.moved', NEW.object_id, true);
      END IF;
      RETURN NULL;
    END
    $$;

    REVOKE ALL ON FUNCTION forum.private_keep_keys(), forum.objects_route(),
      forum.private_parent(text, jsonb), forum.private_home(text, text[], jsonb),
      forum.is_moving(), forum.objects_move(),
      forum.insert_object(text, text, text[], text[], jsonb),
      forum.insert_row(text, text, text[], text[], jsonb) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.insert_object(text, text, text[], text[], jsonb),
      forum.insert_row(text, text, text[], text[], jsonb), forum.is_moving() TO forum_member;

    """
  }

  /// The parent id of a child row (`row_class`, `row_data` in `objects_feed`), else NULL.
  private var feedParent: String {
    let cases = feedParentCases
    return cases.isEmpty ? "NULL" : "CASE row_class \(cases.joined(separator: " ")) END"
  }

  /// The number of a deleted row: a child's number, or the field a sequence numbers.
  private var feedNumber: String {
    let cases = plan.feed.compactMap { step -> String? in
      switch step.effect {
      case .number(let field):
        "WHEN \(PostgresRules.literal(step.className)) THEN \(PostgresRules.integer("row_data->\(PostgresRules.literal(field))"))"
      case .parent: nil
      }
    }
    return cases.isEmpty ? "NULL" : "CASE row_class \(cases.joined(separator: " ")) END"
  }

  /// A jsonb number as bigint, NULL for anything else (a cast that fails would undo the commit).
  private static func integer(_ json: String) -> String {
    "CASE WHEN jsonb_typeof(\(json)) = 'number' THEN (\(json))::numeric::bigint END"
  }

  /// A member's update: managed fields, a child's readers and an owned object's writers stay.
  private var guardBody: String {
    var sql = ""
    for className in classes {
      var fields = managed(className)
      // A parent's file is named when it is created and never changes.
      fields += plan.kept(of: className).filter { !$0.guarded }.map(\.field)
      var lines = [
        "    NEW.data := (NEW.data - \(PostgresRules.array(fields)))"
          + " || jsonb_strip_nulls(jsonb_build_object("
          + fields.map { "\(PostgresRules.literal($0)), OLD.data->\(PostgresRules.literal($0))" }
          .joined(separator: ", ") + "));"
      ]
      for effect in plan.update(of: className) {
        switch effect {
        case .keepRevision:
          break  // `forum.objects_revise` (`reviseBody`)
        case .readersStayTheParents:
          lines.append("    NEW.readers := OLD.readers;")
        case .writersStayTheOwner(let rule):
          let author = "(OLD.data->\(PostgresRules.literal(rule.pointerField))->>'objectId')"
          lines.append(
            """
                IF NEW.writers IS DISTINCT FROM OLD.writers AND NOT (NEW.writers @> ARRAY[\(author)]
                   AND NEW.writers <@ (ARRAY[\(author)] || \(PostgresRules.array(rule.extraWriters)))) THEN
                  RAISE EXCEPTION USING ERRCODE = 'FA403',
                    MESSAGE = 'the writers of a \(className) are its author';
                END IF;
            """)
        case .tombstoneIsFinal(let rule):
          lines.append(
            """
                IF OLD.data ? \(PostgresRules.literal(rule.markField)) THEN
                  RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
                END IF;
            """)
        case .pairKeepsItsACL:
          lines.append("    NEW.readers := OLD.readers;")
          lines.append("    NEW.writers := OLD.writers;")
        }
      }
      if className == User.className {
        lines.append("    NEW.readers := OLD.readers;")
        lines.append("    NEW.writers := OLD.writers;")
      }
      sql += "  IF OLD.class = \(PostgresRules.literal(className)) THEN\n"
      sql += lines.joined(separator: "\n") + "\n  END IF;\n"
    }
    return sql
  }

  private var insertBody: String {
    var sql = ""
    for className in classes where className != User.className {
      var lines: [String] = []
      let fields = managed(className)
      lines.append("    NEW.data := NEW.data - \(PostgresRules.array(fields));")
      // A child's row takes fields from its parent, and the parent's counters one UPDATE.
      var parent: ChildRule?
      var childData: [String] = []
      var parentSets: [String] = []
      for effect in plan.insert(of: className) {
        switch effect {
        case .nextInSequence(let rule):
          lines.append(
            "    NEW.data := NEW.data || jsonb_build_object(\(PostgresRules.literal(rule.field)), "
              + "forum.next_value(\(PostgresRules.literal(rule.sequence))));")
        case .ownedByCaller(let rule):
          lines.append(ownerInsert(rule, className))
        case .pairOfCaller(let rule):
          lines.append(pairInsert(rule))
        case .parentFileWritable(_, let field):
          lines.append(fileCheck(PostgresRules.literal(field)))
        case .startParentCounters(let rule):
          lines.append(
            "    NEW.data := NEW.data || jsonb_build_object("
              + "\(PostgresRules.literal(rule.countField)), 0, "
              + "\(PostgresRules.literal(rule.lastNumberField)), 0, "
              + "\(PostgresRules.literal(rule.activityField)), now_ms);")
        case .requireReadableParent(let rule):
          parent = rule
          let pointer = PostgresRules.literal(rule.pointerField)
          lines.append(parentLookup(rule))
          childData.append("\(pointer), claimed->\(pointer)")
        case .refuseWhileParentLocked(let rule, let flag):
          // `parent` was read FOR UPDATE: a lock set meanwhile is seen, whoever inserts.
          lines.append(
            """
                IF parent.data ? \(PostgresRules.literal(flag.field)) THEN
                  \(PostgresRefusal(.noAccess).sql(saying: .parentLocked(field: rule.parentField)))
                END IF;
            """)
        case .inheritParentReaders:
          lines.append("    NEW.readers := parent.readers;")
        case .numberFromParent(let rule):
          parent = rule
          let last = PostgresRules.literal(rule.lastNumberField)
          lines.append("    number := coalesce((parent.data->>\(last))::bigint, 0) + 1;")
          childData.append("\(PostgresRules.literal(rule.numberField)), number")
          parentSets.append("\(last), number")
        case .countParentUp(let rule):
          parent = rule
          let count = PostgresRules.literal(rule.countField)
          parentSets.append("\(count), coalesce((data->>\(count))::bigint, 0) + 1")
        case .touchParentActivity(let rule):
          parent = rule
          parentSets.append("\(PostgresRules.literal(rule.activityField)), now_ms")
        }
      }
      if !childData.isEmpty {
        lines.append(
          "    NEW.data := NEW.data || jsonb_build_object(\(childData.joined(separator: ", ")));")
      }
      if parent != nil, let first = parentSets.first {
        // The parent's row lock is held until commit: children of one parent are numbered one
        // after another, and a rolled-back child gives its number back.
        let sets =
          first + (parentSets.count > 1 ? ",\n          " : "")
          + parentSets.dropFirst().joined(separator: ", ")
        lines.append(
          """
              IF TG_TABLE_NAME = 'private_objects' THEN
                UPDATE forum.private_objects SET
                  data = data || jsonb_build_object(\(sets))
                WHERE id = parent.id;
              ELSE
                UPDATE forum.objects SET
                  data = data || jsonb_build_object(\(sets))
                WHERE id = parent.id;
              END IF;
          """)
      }
      sql += "  IF NEW.class = \(PostgresRules.literal(className)) THEN\n"
      sql += lines.joined(separator: "\n") + "\n  END IF;\n"
    }
    return sql
  }

  /// An owned object's author is the caller (the schema's owner may name another), and its
  /// writers the author and the rule's extra writers.
  private func ownerInsert(_ rule: OwnerRule, _ className: String) -> String {
    let allowed = PostgresRules.array(rule.extraWriters)
    return """
          IF trusted AND claimed ? \(PostgresRules.literal(rule.pointerField)) THEN
            NEW.data := NEW.data || jsonb_build_object(\(PostgresRules.literal(rule.pointerField)), claimed->\(PostgresRules.literal(rule.pointerField)));
          ELSIF trusted THEN
            NULL;
          ELSE
          IF me IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'FA401', MESSAGE = 'sign in first';
          END IF;
          IF claimed ? \(PostgresRules.literal(rule.pointerField))
             AND claimed->\(PostgresRules.literal(rule.pointerField)) IS DISTINCT FROM \(PostgresRules.pointer(User.className, "me")) THEN
            RAISE EXCEPTION USING ERRCODE = 'FA403',
              MESSAGE = 'the author of a new \(className) must be its caller';
          END IF;
          NEW.data := NEW.data || jsonb_build_object(\(PostgresRules.literal(rule.pointerField)), \(PostgresRules.pointer(User.className, "me")));
          IF NOT (NEW.writers @> ARRAY[me] AND NEW.writers <@ (ARRAY[me] || \(allowed))) THEN
            RAISE EXCEPTION USING ERRCODE = 'FA403',
              MESSAGE = 'the writers of a new \(className) must be its author';
          END IF;
          END IF;
      """
  }

  /// A new parent's file (`file`, a literal), when named: a public file, or one of the caller's
  /// own private files, that the caller may write.
  private func fileCheck(_ file: String) -> String {
    """
        IF NEW.data ? \(file) AND NOT trusted THEN
          -- A public file, or one of the caller's own private files.
          DECLARE
            file_writers text[];
          BEGIN
            SELECT f.writers INTO file_writers FROM forum.files f
            WHERE f.name = NEW.data->>\(file);
            IF NOT FOUND THEN
              SELECT f.writers INTO file_writers
              FROM forum.private_file_rows(ARRAY[NEW.data->>\(file)]) f
              WHERE f.name = NEW.data->>\(file);
            END IF;
            IF NOT FOUND THEN
              RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
            END IF;
            IF NOT file_writers && forum.principals() THEN
              RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'No access with ACL.';
            END IF;
          END;
        END IF;
    """
  }

  /// A child's parent, locked, in the child's table; missing, unreadable or named otherwise
  /// than canonically, the child is refused.
  private func parentLookup(_ rule: ChildRule) -> String {
    let pointer = PostgresRules.literal(rule.pointerField)
    return """
          -- A child lives in its parent's table (`forum.private_home`).
          IF TG_TABLE_NAME = 'private_objects' THEN
            SELECT * INTO parent FROM forum.private_objects
            WHERE class = \(PostgresRules.literal(rule.parentClass))
              AND object_id = (claimed->\(pointer)->>'objectId')
            FOR UPDATE;
          ELSE
            SELECT * INTO parent FROM forum.objects
            WHERE class = \(PostgresRules.literal(rule.parentClass))
              AND object_id = (claimed->\(pointer)->>'objectId')
            FOR UPDATE;
          END IF;
          IF NOT FOUND OR NOT (trusted OR parent.readers && forum.principals())
             OR claimed->\(pointer) IS DISTINCT FROM \(PostgresRules.pointer(rule.parentClass, "parent.object_id")) THEN
            RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
          END IF;
      """
  }

  /// A pair's object: the caller and an existing other user, the pair's key (byte order, as
  /// `PairRule.pairKey`), readers exactly the two and no writers, whatever was sent. The schema's
  /// owner may plant one for two other users by naming the owner field.
  private func pairInsert(_ rule: PairRule) -> String {
    let owner = PostgresRules.literal(rule.ownerField)
    let partnerField = PostgresRules.literal(rule.partnerField)
    let pairField = PostgresRules.literal(rule.pairField)
    let user = PostgresRules.literal(User.className)
    return """
          DECLARE
            starter text := CASE WHEN trusted AND claimed ? \(owner)
                                 THEN claimed->\(owner)->>'objectId' ELSE me END;
            partner text := claimed->\(partnerField)->>'objectId';
          BEGIN
            IF starter IS NULL THEN
              RAISE EXCEPTION USING ERRCODE = 'FA401', MESSAGE = 'sign in first';
            END IF;
            IF partner IS NULL
               OR claimed->\(partnerField) IS DISTINCT FROM \(PostgresRules.pointer(User.className, "partner"))
               OR partner = starter THEN
              RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = \(partnerField);
            END IF;
            IF NOT EXISTS (SELECT 1 FROM forum.objects WHERE class = \(user) AND object_id = partner) THEN
              RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
            END IF;
            NEW.data := NEW.data || jsonb_build_object(
              \(owner), \(PostgresRules.pointer(User.className, "starter")),
              \(partnerField), claimed->\(partnerField),
              \(pairField), CASE WHEN starter COLLATE "C" < partner COLLATE "C"
                              THEN starter || ':' || partner ELSE partner || ':' || starter END);
            NEW.readers := ARRAY[starter, partner];
            NEW.writers := '{}'::text[];
          END;
      """
  }

  /// One object per pair, whoever writes: a unique index on the pair's key column.
  var pairIndexSQL: [String] {
    plan.insert.flatMap { step -> [String] in
      let rule: PairRule
      switch step.effect {
      case .pairOfCaller(let pair): rule = pair
      case .nextInSequence, .ownedByCaller, .parentFileWritable, .startParentCounters,
        .requireReadableParent, .inheritParentReaders, .numberFromParent, .countParentUp,
        .touchParentActivity, .refuseWhileParentLocked:
        return []
      }
      let column = PostgresSchema.keyColumn(for: rule.pairField) ?? rule.pairField
      let name = "objects_unique_\(rule.className)_\(rule.pairField)".lowercased().prefix(63)
      let home = table(rule.className).dropFirst("forum.".count)
      return ["forum.objects", "forum.private_objects"].map {
        """
        ALTER TABLE \($0) ADD COLUMN IF NOT EXISTS "\(column)" text
        GENERATED ALWAYS AS (data #>> '{\(rule.pairField)}') STORED
        """
      } + [
        // Boards made before the split kept it on forum.objects.
        """
        DO $$ BEGIN
          IF EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = 'forum'
                     AND indexname = '\(name)' AND tablename <> '\(home)') THEN
            DROP INDEX forum."\(name)";
          END IF;
        END $$
        """,
        """
        CREATE UNIQUE INDEX IF NOT EXISTS "\(name)"
        ON \(table(rule.className))("\(column)") WHERE class = \(PostgresRules.literal(rule.className))
        """,
      ]
    }
  }

  /// The old values of revisioned fields become a revision; the object gets its edit date.
  private var reviseBody: String {
    var sql = ""
    for step in plan.update {
      let rule: RevisionRule
      let moderation: ModerationRule?
      switch step.effect {
      case .keepRevision(let revision, let tombstone):
        rule = revision
        moderation = tombstone
      // A member's update: the guard (`guardBody`).
      case .readersStayTheParents, .writersStayTheOwner, .tombstoneIsFinal, .pairKeepsItsACL:
        continue
      }
      let changed = rule.fields.map {
        "OLD.data->\(PostgresRules.literal($0)) IS DISTINCT FROM NEW.data->\(PostgresRules.literal($0))"
      }.joined(separator: " OR ")
      let tombstone =
        moderation.map {
          " AND NOT (NEW.data ? \(PostgresRules.literal($0.markField)))"
        } ?? ""
      let old = rule.fields.map {
        "\(PostgresRules.literal($0)), OLD.data->\(PostgresRules.literal($0))"
      }.joined(separator: ", ")
      let editDate = PostgresRules.literal(rule.editDateField)
      sql += """
          IF OLD.class = \(PostgresRules.literal(rule.className))\(tombstone) AND (\(changed)) THEN
            INSERT INTO forum.revisions(object_id, date, data, number)
            VALUES (OLD.object_id, coalesce((OLD.data->>\(editDate))::bigint, OLD.create_date),
                    jsonb_build_object(\(old)), coalesce((SELECT max(number) FROM forum.revisions
                      WHERE object_id = OLD.object_id), 0) + 1);
            -- Only the first and the latest are kept.
            DELETE FROM forum.revisions WHERE object_id = OLD.object_id AND number > 1
              AND number <= (SELECT max(number) FROM forum.revisions
                WHERE object_id = OLD.object_id) - \(Revision.kept - 1);
            NEW.data := NEW.data || jsonb_build_object(\(editDate), NEW.update_date);
          END IF;

        """
    }
    return sql.isEmpty ? "  NULL;\n" : sql
  }

  /// `forum.set_flag` (`FlagRule`): a member of the rule's role, or the board's owner, sets or
  /// clears a flag of a public object, dating the row. Rendered only for rules that declare
  /// flags, so the SQL of rules without any (and their boards' fingerprints) stays as it was.
  private var flagSQL: String {
    guard !flags.isEmpty else { return "" }
    var body = ""
    for rule in flags {
      let field = PostgresRules.literal(rule.field)
      body += """
          IF target_class = \(PostgresRules.literal(rule.className)) AND flag = \(field) THEN
            IF NOT (\(PostgresRules.literal("role:" + rule.role)) = ANY(forum.principals())
                    OR forum.is_board_owner()) THEN
              \(PostgresRefusal(.noAccess).sql())
            END IF;
            SELECT data ? \(field) INTO was FROM forum.objects
            WHERE class = target_class AND object_id = target_id AND '*' = ANY(readers)
            FOR UPDATE;
            IF NOT FOUND THEN
              \(PostgresRefusal(.notFound).sql())
            END IF;
            IF was = flag_on THEN RETURN; END IF;
            UPDATE forum.objects
            SET data = CASE WHEN flag_on THEN data || jsonb_build_object(\(field), stamp)
                            ELSE data - \(field) END,
                update_date = greatest(stamp, update_date + 1)
            WHERE class = target_class AND object_id = target_id;
            RETURN;
          END IF;

        """
    }
    return """

      CREATE OR REPLACE FUNCTION forum.set_flag(target_class text, target_id text, flag text,
                                                flag_on boolean) RETURNS void
      LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
      AS $$
      DECLARE
        was boolean;
        stamp bigint := forum.now_ms();
      BEGIN
      \(body)
        \(PostgresRefusal(.invalid, field: "field").sql())
      END
      $$;
      REVOKE ALL ON FUNCTION forum.set_flag(text, text, text, boolean) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION forum.set_flag(text, text, text, boolean) TO forum_member;

      """
  }

  /// A `StewardRule`: which role keeps which (`forum.keeps_role`), who sets which setting
  /// (`forum.may_set_setting`), and a trigger before every write of a row or file that refuses
  /// a member of the banned role, whoever's function writes for them (the acting app user or
  /// the connecting role, never `current_user`). Rendered only for rules that declare one, so
  /// the SQL of other rules (and their boards' fingerprints) stays as it was.
  private var stewardSQL: String {
    guard let rule = rules.stewards.first else { return "" }
    let steward = PostgresRules.literal("role:" + rule.role)
    let banned = PostgresRules.literal(rule.bannedRole)
    let settings =
      rule.settings.isEmpty
      ? "NULL" : rule.settings.map(PostgresRules.literal).joined(separator: ", ")
    var triggers = ""
    for (table, events) in [
      ("objects", "INSERT OR UPDATE"), ("private_objects", "INSERT OR UPDATE"),
      ("files", "INSERT OR UPDATE"), ("private_files", "INSERT OR UPDATE"),
    ] {
      triggers += """
        DROP TRIGGER IF EXISTS a00_banned ON forum.\(table);
        CREATE TRIGGER a00_banned BEFORE \(events) ON forum.\(table)
          FOR EACH ROW EXECUTE FUNCTION forum.refuse_banned();

        """
    }
    return """

      CREATE OR REPLACE FUNCTION forum.keeps_role(board_role text) RETURNS boolean
      LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
      AS $$ SELECT board_role = \(banned) AND \(steward) = ANY(forum.principals()) $$;
      CREATE OR REPLACE FUNCTION forum.may_set_setting(setting text) RETURNS boolean
      LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
      AS $$
        SELECT setting IN (\(settings))
          AND (forum.is_board_owner() OR \(steward) = ANY(forum.principals()))
      $$;
      CREATE OR REPLACE FUNCTION forum.refuse_banned() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
      AS $$
      DECLARE
        -- (plpgsql's IF reads its condition up to the first THEN: no CASE inside it.)
        is_banned boolean := CASE WHEN forum.is_server()
          THEN EXISTS (SELECT 1 FROM forum.app_role_members
                       WHERE role = \(banned) AND user_id = forum.acting_user())
          ELSE EXISTS (SELECT 1 FROM pg_roles r
                       WHERE r.rolname = \(PostgresRules.literal("forum_role_" + rule.bannedRole))
                         AND pg_has_role(session_user, r.oid, 'MEMBER'))
          END;
      BEGIN
        IF is_banned THEN
          \(PostgresRefusal(.noAccess).sql(saying: StoreReason.banned))
        END IF;
        RETURN NEW;
      END
      $$;
      REVOKE ALL ON FUNCTION forum.keeps_role(text), forum.may_set_setting(text),
        forum.refuse_banned() FROM PUBLIC;
      \(triggers)
      """
  }

  /// `forum.moderate`: a member of the rule's role takes down a public object, leaving a
  /// tombstone; its revisions and file go.
  private var moderateBody: String {
    var sql = ""
    for rule in moderation {
      let mark = PostgresRules.literal(rule.markField)
      let file = rule.fileField.map { "data->>\(PostgresRules.literal($0))" } ?? "NULL"
      sql += """
          IF target_class = \(PostgresRules.literal(rule.className)) THEN
            IF NOT (\(PostgresRules.literal("role:" + rule.role)) = ANY(forum.principals())) THEN
              RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'only moderators may do that';
            END IF;
            SELECT \(file) INTO old_file FROM forum.objects
            WHERE class = target_class AND object_id = target_id AND '*' = ANY(readers)
              AND NOT (data ? \(mark))
            FOR UPDATE;
            IF NOT FOUND THEN
              RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
            END IF;
            UPDATE forum.objects
            SET data = (data - \(PostgresRules.array(rule.contentFields)))
                       || jsonb_build_object(\(mark), stamp),
                update_date = stamp
            WHERE class = target_class AND object_id = target_id;
            DELETE FROM forum.revisions WHERE object_id = target_id;
            IF old_file IS NOT NULL THEN
              DELETE FROM forum.files WHERE name = old_file;
              DELETE FROM forum.private_files WHERE name = old_file;
            END IF;
            RETURN;
          END IF;

        """
    }
    return sql
  }

  private var deleteBody: String {
    // An object's revisions and everyone's read positions in it go with it.
    var sql = """
        DELETE FROM forum.revisions WHERE object_id = OLD.object_id;
        DELETE FROM forum.read_positions WHERE object_id = OLD.object_id;

      """
    // Consecutive effects on one class share its `IF OLD.class = …` block.
    var open: String?
    for step in plan.delete {
      if step.className != open {
        if open != nil { sql += "  END IF;\n" }
        sql += "  IF OLD.class = \(PostgresRules.literal(step.className)) THEN\n"
        open = step.className
      }
      sql += deleteEffect(step.effect, of: step.className)
    }
    if open != nil { sql += "  END IF;\n" }
    return sql
  }

  private func deleteEffect(_ effect: DeleteEffect, of className: String) -> String {
    switch effect {
    case .countParentDown(let rule, let clampAtZero):
      let count = PostgresRules.literal(rule.countField)
      let less = "coalesce((data->>\(count))::bigint, 0) - 1"
      let value = clampAtZero ? "greatest(0, \(less))" : less
      return """
            -- The parent is in the child's table.
            IF TG_TABLE_NAME = 'private_objects' THEN
              UPDATE forum.private_objects SET
                data = data || jsonb_build_object(\(count),
                  \(value))
              WHERE class = \(PostgresRules.literal(rule.parentClass))
                AND object_id = OLD.data->\(PostgresRules.literal(rule.pointerField))->>'objectId';
            ELSE
              UPDATE forum.objects SET
                data = data || jsonb_build_object(\(count),
                  \(value))
              WHERE class = \(PostgresRules.literal(rule.parentClass))
                AND object_id = OLD.data->\(PostgresRules.literal(rule.pointerField))->>'objectId';
            END IF;

        """
    case .deleteChildren(let rule):
      return """
            IF TG_TABLE_NAME = 'private_objects' THEN
              DELETE FROM forum.private_objects
              WHERE class = \(PostgresRules.literal(rule.childClass)) AND parent_id = OLD.object_id;
            ELSE
              DELETE FROM forum.objects
              WHERE class = \(PostgresRules.literal(rule.childClass))
                AND data->\(PostgresRules.literal(rule.pointerField)) = \(PostgresRules.pointer(className, "OLD.object_id"));
            END IF;

        """
    case .deleteFile(_, let file):
      // Only a file the deleting caller could delete itself goes with the parent: the parent's
      // file name is the author's to set, so it must not reach someone else's file.
      return """
              DELETE FROM forum.files
              WHERE name = OLD.data->>\(PostgresRules.literal(file))
                AND writers && forum.principals();
              DELETE FROM forum.private_files
              WHERE name = OLD.data->>\(PostgresRules.literal(file))
                AND writers && forum.principals();

        """
    }
  }

  private var updateBody: String {
    var sql = ""
    for step in plan.readersChange {
      switch step.effect {
      case .childrenFollow(let rule):
        sql += """
            IF NEW.class = \(PostgresRules.literal(step.className)) THEN
              IF TG_TABLE_NAME = 'private_objects' THEN
                UPDATE forum.private_objects SET readers = NEW.readers
                WHERE class = \(PostgresRules.literal(rule.childClass)) AND parent_id = NEW.object_id;
              ELSE
                UPDATE forum.objects SET readers = NEW.readers
                WHERE class = \(PostgresRules.literal(rule.childClass))
                  AND data->\(PostgresRules.literal(rule.pointerField)) = \(PostgresRules.pointer(step.className, "NEW.object_id"));
              END IF;
            END IF;

          """
      }
    }
    return sql.isEmpty ? "  NULL;\n" : sql
  }
}

extension OwnerRule {
  /// The pointer field naming the author; it must be the caller.
  var pointerField: String { field }
  /// Principals allowed among the writers besides the author, in one order.
  var extraWriters: [String] { additionalWriters.sorted() }
}

extension ChildRule {
  /// The child's pointer to its parent.
  var pointerField: String { parentField }
}
