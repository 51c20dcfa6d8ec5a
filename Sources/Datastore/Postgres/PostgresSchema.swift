/// The forum's schema on PostgreSQL: tables, row-level security, grants, and the engine rules as
/// triggers. `forum init`, run by the database owner, installs it; members never run DDL.
///
/// Who may do what is decided by the server:
/// - Every table has row-level security enabled and forced. Members (roles granted
///   `forum_member`) read rows whose `readers` share a principal with theirs, and change or delete
///   rows whose `writers` do. The owner's policies let the engine's bookkeeping functions (which run
///   as the owner) reach every row.
/// - A caller's principals are `*`, the user id mapped to `session_user`, and `role:<name>` for each
///   `forum_role_<name>` role it belongs to, computed by `forum.principals()` and written
///   `(SELECT forum.principals())` in policies so the planner evaluates it once per statement.
/// - Members may write only some columns; the rest, and the managed fields in `data` (numbers,
///   counters, authorship), are set by triggers from the engine's clock and counters.
/// - The role → user mapping and the counters are not granted to members at all.
enum PostgresSchema {
  static let schema = "forum"
  static let memberRole = "forum_member"
  /// Board roles (`role:moderator`) are PostgreSQL roles named with this prefix.
  static let boardRolePrefix = "forum_role_"

  /// Append-only steps; `forum.meta.schema_version` records how many have run.
  static let steps: [String] = [
    """
    CREATE TABLE forum.meta(key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE forum.objects(
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      class text NOT NULL,
      object_id text NOT NULL UNIQUE CHECK (object_id ~ '^[A-Za-z0-9]{16}$'),
      create_date bigint NOT NULL,
      update_date bigint NOT NULL,
      readers text[] NOT NULL,
      writers text[] NOT NULL,
      data jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object')
    );
    CREATE INDEX objects_class_create_date ON forum.objects(class, create_date, id);
    CREATE INDEX objects_readers ON forum.objects USING gin(readers);
    CREATE TABLE forum.files(
      name text PRIMARY KEY,
      mime_type text NOT NULL,
      file_size bigint NOT NULL,
      create_date bigint NOT NULL,
      update_date bigint NOT NULL,
      readers text[] NOT NULL,
      writers text[] NOT NULL,
      data bytea NOT NULL
    );
    CREATE TABLE forum.users(
      role_name name PRIMARY KEY,
      user_id text NOT NULL UNIQUE
    );
    CREATE TABLE forum.counters(name text PRIMARY KEY, value bigint NOT NULL);
    """,
    // A user belongs to one role, not to a role name: a role dropped and created again under the
    // same name (for someone else) must not inherit the old user.
    """
    ALTER TABLE forum.users ADD COLUMN role_oid oid;
    UPDATE forum.users u SET role_oid = r.oid FROM pg_roles r WHERE r.rolname = u.role_name;
    """,
    // The datastore's own size limits, held by the server too, so a member with psql cannot
    // store what the API refuses: no text over 1,000,000 bytes anywhere in an object
    // (DatastoreClient.maximumTextBytes), no file over 5 MB (Datastore.defaultFileSizeLimit).
    """
    CREATE FUNCTION forum.texts_within(document jsonb, maximum integer) RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog
      AS $$
        SELECT NOT EXISTS (
          SELECT 1 FROM jsonb_path_query(document, 'strict $.**') AS item
          WHERE jsonb_typeof(item) = 'string' AND octet_length(item #>> '{}') > maximum)
      $$;
    GRANT EXECUTE ON FUNCTION forum.texts_within(jsonb, integer) TO forum_member;
    ALTER TABLE forum.objects ADD CONSTRAINT objects_texts_within
      CHECK (forum.texts_within(data, \(DatastoreClient.maximumTextBytes)));
    ALTER TABLE forum.files ADD CONSTRAINT files_within CHECK (octet_length(data) <= \(Datastore.defaultFileSizeLimit));
    """,
    // The change feed (`Change`): a row per object written, by `forum.objects_feed()` at commit
    // (`PostgresRules`), numbered from `change_seq` in commit order. Members read it under
    // row-level security by the readers recorded with each row.
    """
    CREATE SEQUENCE forum.change_seq;
    CREATE TABLE forum.changes(
      seq bigint PRIMARY KEY,
      class text NOT NULL,
      object_id text NOT NULL,
      kind smallint NOT NULL,
      parent_id text,
      number bigint,
      readers text[] NOT NULL
    );
    """,
    // Each user's read position per parent object (private to that user by row-level security),
    // and the earlier revisions of edited objects (written by the owner's triggers only).
    """
    CREATE TABLE forum.read_positions(
      user_id text NOT NULL,
      object_id text NOT NULL,
      position bigint NOT NULL CHECK (position >= 0),
      PRIMARY KEY (user_id, object_id)
    );
    CREATE INDEX read_positions_object ON forum.read_positions(object_id);
    CREATE TABLE forum.revisions(
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      object_id text NOT NULL,
      date bigint NOT NULL,
      data jsonb NOT NULL
    );
    CREATE INDEX revisions_object ON forum.revisions(object_id, id);
    """,
    // Issue 22. The change feed's commit-order lock is a row of a table members cannot touch
    // (an advisory lock is open to everyone: a member holding its key stopped every post). No
    // object nests deeper than 100 levels (the datastore reads 512 at most: a deeper row broke
    // every listing it was on), and none is over 2,000,000 bytes as JSON text (250 strings of a
    // megabyte made one page take seconds and gigabytes). NOT VALID: rows written before are
    // kept as they are; every write from now on is checked.
    """
    CREATE TABLE forum.feed_lock(id integer PRIMARY KEY);
    INSERT INTO forum.feed_lock VALUES (1);
    CREATE FUNCTION forum.shape_within(document jsonb, depth integer, bytes integer)
      RETURNS boolean
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog
      AS $$
        SELECT octet_length(document::text) <= bytes
          AND NOT jsonb_path_exists(document, ('strict $.**{' || depth || ' to last}')::jsonpath)
      $$;
    GRANT EXECUTE ON FUNCTION forum.shape_within(jsonb, integer, integer) TO forum_member;
    ALTER TABLE forum.objects ADD CONSTRAINT objects_shape_within
      CHECK (forum.shape_within(data, \(DatastoreClient.maximumObjectDepth + 1), \(DatastoreClient.maximumObjectBytes))) NOT VALID;
    """,
    // Issue 18, `forum serve`: owner-only tables no member can read. The board's NCMB keys
    // (`secrets`), the apps' anonymous users by the SHA-256 of their `authData` id, and their
    // sessions by the SHA-256 of the token; a server role reaches them through
    // `forum.app_sign_in` / `forum.act_as` (`PostgresSchema.appFunctionsSQL`).
    """
    CREATE TABLE forum.secrets(name text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE forum.app_identities(
      secret_hash bytea PRIMARY KEY,
      user_id text NOT NULL UNIQUE
    );
    CREATE TABLE forum.app_sessions(
      token_hash bytea PRIMARY KEY,
      user_id text NOT NULL,
      expires_at bigint NOT NULL
    );
    CREATE INDEX app_sessions_user ON forum.app_sessions(user_id);
    """,
    // Issue 22 item 2. The rows of private classes (pairs and their children: conversations and
    // their messages) live in a table members hold no grant on: a member's own query never
    // reaches them, so no index condition, filter count, estimate or buffer of it depends on
    // them. Members read them through `forum.private_rows`, which starts from the caller's own
    // reader keys (`reader_keys`: class, class and parent, and object id, each with a reader), and
    // write them through `forum.insert_object` / `forum.update_object` / `forum.delete_object`.
    // Their own identity, so `forum.objects.id` has no gaps for them; their feed rows go to
    // `private_changes`, one row per reader, read from the caller's own readers up. Rows of these
    // classes written by older boards are moved by `forum init` (`PostgresSchema.movePrivateRows`).
    """
    CREATE TABLE forum.private_objects(
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      class text NOT NULL,
      object_id text NOT NULL UNIQUE CHECK (object_id ~ '^[A-Za-z0-9]{16}$'),
      create_date bigint NOT NULL,
      update_date bigint NOT NULL,
      readers text[] NOT NULL,
      writers text[] NOT NULL,
      data jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object'),
      parent_id text,
      reader_keys text[] NOT NULL DEFAULT '{}',
      CONSTRAINT private_objects_texts_within
        CHECK (forum.texts_within(data, \(DatastoreClient.maximumTextBytes))),
      CONSTRAINT private_objects_shape_within CHECK (forum.shape_within(data, 101, 2000000))
    );
    CREATE INDEX private_objects_reader_keys ON forum.private_objects
      USING gin(reader_keys) WITH (fastupdate = off);
    CREATE INDEX private_objects_parent ON forum.private_objects(class, parent_id, id);
    CREATE TABLE forum.private_changes(
      reader text NOT NULL,
      seq bigint NOT NULL,
      class text NOT NULL,
      object_id text NOT NULL,
      kind smallint NOT NULL,
      parent_id text,
      number bigint,
      readers text[] NOT NULL,
      PRIMARY KEY (reader, seq)
    );
    CREATE INDEX private_changes_seq ON forum.private_changes(seq);
    CREATE TABLE forum.private_search_text(
      id bigint PRIMARY KEY REFERENCES forum.private_objects(id) ON DELETE CASCADE,
      class text NOT NULL,
      body text NOT NULL
    );
    """,
    // Issue 22: each revision keeps its number, so that only the first and the latest
    // `Revision.kept - 1` need be kept (the revision trigger drops the rest as it writes one: a
    // member editing a post 10,000 times filled the table); older objects are cut down here.
    """
    ALTER TABLE forum.revisions ADD COLUMN IF NOT EXISTS number bigint;
    UPDATE forum.revisions r SET number = ranked.n
      FROM (SELECT id, row_number() OVER (PARTITION BY object_id ORDER BY id) AS n
            FROM forum.revisions) ranked
      WHERE ranked.id = r.id;
    DELETE FROM forum.revisions r WHERE number > 1 AND number <= (SELECT max(x.number)
      FROM forum.revisions x WHERE x.object_id = r.object_id) - \(Revision.kept - 1);
    """,
    // An app user may delete its own user (`forum.delete_object`, re-made by every init), which
    // forgets its anonymous id and sessions: ids and sessions of users deleted by hand before
    // are forgotten too, so their id signs up anew.
    """
    DELETE FROM forum.app_sessions s
      WHERE NOT EXISTS (SELECT 1 FROM forum.objects o WHERE o.object_id = s.user_id);
    DELETE FROM forum.app_identities i
      WHERE NOT EXISTS (SELECT 1 FROM forum.objects o WHERE o.object_id = i.user_id);
    """,
    // Issue 22: every row some members may not read (readers without '*': private threads,
    // their comments, preferences, an app's private objects) lives in `forum.private_objects`,
    // not only the rows of private classes; a row whose readers gain or lose '*' changes
    // tables (`forum.objects_move`, which the triggers know by a setting equal to this secret;
    // members cannot read it, so they cannot pretend to be moving a row). Files alike, in
    // `forum.private_files` (`PostgresSchema+Files`). `forum init` moves the rows of older
    // boards (`PostgresSchema.movePrivateRows`, `movePrivateFiles`).
    """
    INSERT INTO forum.secrets(name, value)
    VALUES ('move_key', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
    ON CONFLICT (name) DO NOTHING;
    CREATE TABLE IF NOT EXISTS forum.private_files(
      name text PRIMARY KEY,
      mime_type text NOT NULL,
      file_size bigint NOT NULL,
      create_date bigint NOT NULL,
      update_date bigint NOT NULL,
      readers text[] NOT NULL,
      writers text[] NOT NULL,
      data bytea NOT NULL,
      reader_keys text[] NOT NULL DEFAULT '{}',
      CONSTRAINT private_files_within CHECK (octet_length(data) <= \(Datastore.defaultFileSizeLimit))
    );
    CREATE INDEX IF NOT EXISTS private_files_reader_keys ON forum.private_files
      USING gin(reader_keys) WITH (fastupdate = off);
    """,
    // Issue 20: the change feed keeps at most the newest `Change.window` sequence numbers. A
    // feed row that would pass it cuts the oldest at once, `pruneBatch` below the window and
    // more, by ranges of the `seq` indexes (a row at a time walked the dead rows of every
    // delete before: minutes); `changes_pruned` records the last number cut, so a reader behind
    // it is told (`ChangeBatch.missed`). Both feeds, public and private, share the numbers.
    // An older board's feed is cut now. Idempotent, as a board taken back to an older version
    // by hand runs it again.
    """
    CREATE TABLE IF NOT EXISTS forum.changes_pruned(
      id integer PRIMARY KEY CHECK (id = 1), through bigint NOT NULL);
    INSERT INTO forum.changes_pruned VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
    CREATE OR REPLACE FUNCTION forum.changes_prune() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      cut bigint := NEW.seq - \(Change.window - Change.pruneBatch);
    BEGIN
      IF NEW.seq - (SELECT through FROM forum.changes_pruned WHERE id = 1) > \(Change.window) THEN
        DELETE FROM forum.changes WHERE seq <= cut;
        DELETE FROM forum.private_changes WHERE seq <= cut;
        UPDATE forum.changes_pruned SET through = greatest(through, cut) WHERE id = 1;
      END IF;
      RETURN NULL;
    END
    $$;
    DROP TRIGGER IF EXISTS changes_prune ON forum.changes;
    CREATE TRIGGER changes_prune AFTER INSERT ON forum.changes
      FOR EACH ROW EXECUTE FUNCTION forum.changes_prune();
    DROP TRIGGER IF EXISTS changes_prune ON forum.private_changes;
    CREATE TRIGGER changes_prune AFTER INSERT ON forum.private_changes
      FOR EACH ROW EXECUTE FUNCTION forum.changes_prune();
    -- The last number pruned, whoever asks: it says only that older changes are gone.
    CREATE OR REPLACE FUNCTION forum.changes_pruned_through() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$ SELECT through FROM forum.changes_pruned WHERE id = 1 $$;
    REVOKE ALL ON FUNCTION forum.changes_prune(), forum.changes_pruned_through() FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.changes_pruned_through() TO forum_member;
    UPDATE forum.changes_pruned SET through = greatest(0,
      (SELECT coalesce(max(seq), 0) FROM forum.changes) - \(Change.window),
      (SELECT coalesce(max(seq), 0) FROM forum.private_changes) - \(Change.window));
    DELETE FROM forum.changes WHERE seq <= (SELECT through FROM forum.changes_pruned);
    DELETE FROM forum.private_changes WHERE seq <= (SELECT through FROM forum.changes_pruned);
    """,
    // Issue 18: NCMB's file search lists the caller's private files by a key per reader
    // (`fa/<reader>`, `PostgresSchema.fileKeysSQL`); the files already there get it, as they
    // are (no date moves).
    """
    \(PostgresSchema.fileKeysSQL)
    ALTER TABLE forum.private_files DISABLE TRIGGER USER;
    UPDATE forum.private_files SET reader_keys = forum.file_keys(name, readers);
    ALTER TABLE forum.private_files ENABLE TRIGGER USER;
    """,
    // Issue 22: the engine's unread filter reads all of the caller's read positions as one set,
    // `forum.my_read_positions()` (in `functionsSQL`, remade by every init), which the planner
    // hashes once, where `forum.read_position(id)` per row (a definer function it
    // cannot inline) made `list --unread` on 100,000 threads take minutes. This step makes a
    // board set up before it ask its owner for `forum init`; the planner gets fresh figures.
    """
    ANALYZE forum.read_positions;
    """,
    // Issue 28 item 6: `texts_within` (step 3) took minutes for a megabyte of `[[0],[0],…]`,
    // quadratic in the number of nodes (PostgreSQL 15's `jsonb_path_query` hands out its
    // results by deleting the first of a list, which moves the rest each time). Now linear, in
    // up to three passes that each stop the check when they can: no string is longer than the
    // whole text; nor than its token in the text (with `\\` and `\"` replaced by two other
    // bytes, the quotes left are the strings' own, so every other piece between quotes is a
    // string as the text spells it, escapes included: never shorter than the string); only an
    // object holding a token that long has its strings gathered in one walk and measured. Same
    // limit, same constraint (a function replaced in place is not checked again on old rows).
    """
    CREATE OR REPLACE FUNCTION forum.texts_within(document jsonb, maximum integer)
      RETURNS boolean
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog
      AS $$
      DECLARE
        spelled text := document::text;
      BEGIN
        IF octet_length(spelled) <= maximum THEN RETURN true; END IF;
        IF NOT EXISTS (
          SELECT 1 FROM unnest(string_to_array(
              replace(replace(spelled, '\\\\', '__'), '\\"', '__'), '"')) WITH ORDINALITY
            AS piece(token, n)
          WHERE n % 2 = 0 AND octet_length(token) > maximum)
        THEN
          RETURN true;
        END IF;
        RETURN NOT EXISTS (
          SELECT 1 FROM jsonb_array_elements_text(
            jsonb_path_query_array(document, 'strict $.** ? (@.type() == "string")')) AS item
          WHERE octet_length(item) > maximum);
      END
      $$;
    """,
    // Issue 28 H5: who created each row (`creator`: the app user a server acts for, set by a
    // trigger at insert, never from the client's columns, which members cannot name; NULL for
    // rows written before and for members' own writes), carried when a row changes tables
    // (`forum.objects_move`, `movePrivateRows`), and the bytes of JSON text each creator's rows
    // hold (`forum.storage`, owner-only, kept by definer triggers on both tables), read by
    // `forum serve`'s quota per user through `forum.my_storage()`.
    """
    ALTER TABLE forum.objects ADD COLUMN IF NOT EXISTS creator text;
    ALTER TABLE forum.private_objects ADD COLUMN IF NOT EXISTS creator text;
    CREATE TABLE IF NOT EXISTS forum.storage(user_id text PRIMARY KEY, bytes bigint NOT NULL);
    CREATE OR REPLACE FUNCTION forum.objects_creator() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.is_moving() THEN NEW.creator := forum.acting_user(); END IF;
      RETURN NEW;
    END
    $$;
    CREATE OR REPLACE FUNCTION forum.objects_storage() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.creator IS NOT NULL THEN
        UPDATE forum.storage SET bytes = bytes - octet_length(OLD.data::text)
        WHERE user_id = OLD.creator;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.creator IS NOT NULL THEN
        INSERT INTO forum.storage(user_id, bytes) VALUES (NEW.creator, octet_length(NEW.data::text))
        ON CONFLICT (user_id) DO UPDATE SET bytes = forum.storage.bytes + excluded.bytes;
      END IF;
      RETURN NULL;
    END
    $$;
    CREATE OR REPLACE FUNCTION forum.my_storage() RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      RETURN coalesce((SELECT bytes FROM forum.storage WHERE user_id = forum.acting_user()), 0);
    END
    $$;
    REVOKE ALL ON FUNCTION forum.objects_creator(), forum.objects_storage(), forum.my_storage()
      FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.my_storage() TO forum_member;
    DROP TRIGGER IF EXISTS a_creator ON forum.objects;
    CREATE TRIGGER a_creator BEFORE INSERT ON forum.objects
      FOR EACH ROW EXECUTE FUNCTION forum.objects_creator();
    DROP TRIGGER IF EXISTS a_creator ON forum.private_objects;
    CREATE TRIGGER a_creator BEFORE INSERT ON forum.private_objects
      FOR EACH ROW EXECUTE FUNCTION forum.objects_creator();
    DROP TRIGGER IF EXISTS z_storage ON forum.objects;
    CREATE TRIGGER z_storage AFTER INSERT OR DELETE OR UPDATE OF data ON forum.objects
      FOR EACH ROW EXECUTE FUNCTION forum.objects_storage();
    DROP TRIGGER IF EXISTS z_storage ON forum.private_objects;
    CREATE TRIGGER z_storage AFTER INSERT OR DELETE OR UPDATE OF data ON forum.private_objects
      FOR EACH ROW EXECUTE FUNCTION forum.objects_storage();
    """,
    // Issue 28 H5: files count too: who uploaded each (`creator` on both file tables, set by
    // `forum.objects_creator` at insert, carried when a file changes tables: `forum.files_move`,
    // `movePrivateFiles`), its bytes added to `forum.storage` and taken away at its delete.
    """
    ALTER TABLE forum.files ADD COLUMN IF NOT EXISTS creator text;
    ALTER TABLE forum.private_files ADD COLUMN IF NOT EXISTS creator text;
    CREATE OR REPLACE FUNCTION forum.files_storage() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.creator IS NOT NULL THEN
        UPDATE forum.storage SET bytes = bytes - octet_length(OLD.data)
        WHERE user_id = OLD.creator;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.creator IS NOT NULL THEN
        INSERT INTO forum.storage(user_id, bytes) VALUES (NEW.creator, octet_length(NEW.data))
        ON CONFLICT (user_id) DO UPDATE SET bytes = forum.storage.bytes + excluded.bytes;
      END IF;
      RETURN NULL;
    END
    $$;
    REVOKE ALL ON FUNCTION forum.files_storage() FROM PUBLIC;
    DROP TRIGGER IF EXISTS a_creator ON forum.files;
    CREATE TRIGGER a_creator BEFORE INSERT ON forum.files
      FOR EACH ROW EXECUTE FUNCTION forum.objects_creator();
    DROP TRIGGER IF EXISTS a_creator ON forum.private_files;
    CREATE TRIGGER a_creator BEFORE INSERT ON forum.private_files
      FOR EACH ROW EXECUTE FUNCTION forum.objects_creator();
    DROP TRIGGER IF EXISTS z_storage ON forum.files;
    CREATE TRIGGER z_storage AFTER INSERT OR DELETE OR UPDATE OF data ON forum.files
      FOR EACH ROW EXECUTE FUNCTION forum.files_storage();
    DROP TRIGGER IF EXISTS z_storage ON forum.private_files;
    CREATE TRIGGER z_storage AFTER INSERT OR DELETE OR UPDATE OF data ON forum.private_files
      FOR EACH ROW EXECUTE FUNCTION forum.files_storage();
    """,
    // Issue 34: the roles of app users (`forum import ncmb` brings an app's roles; a server's
    // `forum.principals()` adds the roles of the user it acts for). Owner-only.
    """
    CREATE TABLE IF NOT EXISTS forum.app_role_members(
      role text NOT NULL,
      user_id text NOT NULL,
      PRIMARY KEY (user_id, role)
    );
    """,
    // Issue 34: password accounts of app users, owner-only like `app_identities`: the name in
    // lower case, the user, and the Argon2id hash of the password (libsodium's string, made by
    // the server in Swift); a server reaches them through `forum.app_sign_up`,
    // `forum.app_password_of`, `forum.app_password_session` and `forum.app_set_password`
    // (`PostgresSchema+Apps.swift`). No member reads or writes a row of it.
    """
    CREATE TABLE IF NOT EXISTS forum.app_passwords(
      name_key text PRIMARY KEY,
      user_id text NOT NULL UNIQUE,
      password_hash text NOT NULL
    );
    """,
    // Issue 34: NCMB's array changes (`Add`, `AddUnique`, `Remove`, `AddRelation`,
    // `RemoveRelation`) are made by `forum.array_changed`, which the engine's UPDATE and
    // `forum.update_object` call (both in `functionsSQL`, remade by `forum init` after this
    // step): a board set up before asks its owner for `forum init`.
    """
    SELECT 1;
    """,
    // Issue 28 H5: rows and files stored before step 16 get a creator where the board knows one
    // (as SQLite's version 20 does), when that is an app user (members' own writes are not
    // counted, as step 16 says): for a class with an owner rule (the rules recorded in
    // `forum.meta`), the user its author pointer names; else the one user its ACL lets write
    // (roles aside, not when `*` may write). Rows anyone, several users, only roles or no one
    // may write stay without one. Nothing else runs meanwhile (no trigger: dates, feed and
    // revisions stay); then `forum.storage` is counted again from the four tables, each row by
    // the measure its trigger uses. Only rows without a creator are looked at.
    creatorsBackfill(from: "forum.app_identities"),
    memberStorageStep,
    // Issue 32: bans and settings are the board's (`StewardRule`): stewards grant the banned
    // role, to app users too (`forum.set_board_role`, in `functionsSQL`), set the board's
    // settings (`forum.set_board_setting`), and the rules' trigger refuses a banned member's
    // writes (`PostgresRules.stewardSQL`). Nothing to store anew: a board set up before asks
    // its owner for `forum init`, which remakes the functions and the rules.
    """
    SELECT 1;
    """,
    geoCoordinateStep,
    memberStorageSettingStep,
    identityInOneStatementStep,
    keyColumnNamesStep,
  ]

  /// Key columns were named by their field lowercased, dots as underscores: `note` and `Note`,
  /// or `a.b` and `a_b`, shared one column, holding the field made first, and a query on the
  /// other sought the wrong values (an object with both fields was not found). Each is renamed
  /// to its field's own name (`keyColumn(for:)`), read from what it holds; the indexes on it
  /// follow. Renaming rewrites no row.
  static let keyColumnNamesStep = #"""
    DO $$
    DECLARE
      c record;
      wanted text;
    BEGIN
      FOR c IN
        SELECT a.attrelid::regclass AS home, a.attname::text AS name,
          substring(pg_get_expr(d.adbin, d.adrelid) FROM '#>> ''\{([^}]*)\}''') AS path
        FROM pg_attribute a
        JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid IN ('forum.objects'::regclass, 'forum.private_objects'::regclass)
          AND a.attname LIKE 'key\_%' AND NOT a.attisdropped
      LOOP
        CONTINUE WHEN c.path IS NULL;
        wanted := 'key_' || replace(c.path, ',', '.');
        IF octet_length(wanted) > 63 THEN
          wanted := left(wanted, 46) || '_'
            || left(encode(sha256(convert_to(wanted, 'UTF8')), 'hex'), 16);
        END IF;
        IF wanted <> c.name AND NOT EXISTS (
          SELECT 1 FROM pg_attribute
          WHERE attrelid = c.home AND attname = wanted AND NOT attisdropped)
        THEN
          EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', c.home, c.name, wanted);
        END IF;
      END LOOP;
    END $$;
    """#

  /// Issue 29, step 26: the caller's identity in one statement (`forum.session_principals`,
  /// in `functionsSQL`) and `forum.now_ms` inlined, so that a read of `forum serve` no longer
  /// spends most of its time in `forum.private_rows` finding out who asks. Nothing to store
  /// anew: a board set up before asks its owner for `forum init`, which remakes the functions.
  static let identityInOneStatementStep = """
    SELECT 1;
    """

  /// Steps 21 and 22: gives rows and files without a creator the one the board knows, among
  /// `users` (a table with a `user_id` column), then counts `forum.storage` again.
  static func creatorsBackfill(from users: String) -> String {
    return """
      DO $$
      DECLARE
        t text;
      BEGIN
        FOREACH t IN ARRAY ARRAY['objects', 'private_objects', 'files', 'private_files'] LOOP
          EXECUTE format('ALTER TABLE forum.%I DISABLE TRIGGER USER', t);
          IF t LIKE '%objects' THEN
            EXECUTE format($q$
              UPDATE forum.%I o SET creator = o.data #>> ARRAY[r.field, 'objectId']
              FROM (SELECT x->>'className' AS class, x->>'field' AS field
                    FROM forum.meta m, jsonb_array_elements(m.value::jsonb -> 'owners') x
                    WHERE m.key = 'rules') r
              WHERE o.creator IS NULL AND o.class = r.class
                AND o.data #>> ARRAY[r.field, '__type'] = 'Pointer'
                AND o.data #>> ARRAY[r.field, 'objectId'] IN
                  (SELECT user_id FROM \(users))$q$, t);
          END IF;
          EXECUTE format($q$
            UPDATE forum.%I SET creator = (SELECT w FROM unnest(writers) w WHERE w NOT LIKE 'role:%%')
            WHERE creator IS NULL AND NOT '*' = ANY(writers)
              AND (SELECT count(*) FROM unnest(writers) w WHERE w NOT LIKE 'role:%%') = 1
              AND EXISTS (SELECT 1 FROM unnest(writers) w
                          JOIN \(users) a ON a.user_id = w)$q$, t);
          EXECUTE format('ALTER TABLE forum.%I ENABLE TRIGGER USER', t);
        END LOOP;
        DELETE FROM forum.storage;
        INSERT INTO forum.storage(user_id, bytes)
        SELECT creator, sum(bytes) FROM (
          SELECT creator, octet_length(data::text) AS bytes FROM forum.objects
          UNION ALL SELECT creator, octet_length(data::text) FROM forum.private_objects
          UNION ALL SELECT creator, octet_length(data) FROM forum.files
          UNION ALL SELECT creator, octet_length(data) FROM forum.private_files) AS stored
        WHERE creator IS NOT NULL GROUP BY creator;
      END
      $$;
      """
  }

  /// Issue 28 H5, step 22: members' own writes (psql, `forum` on the terminal) count in the
  /// storage per user and are bounded, as an app user's are by `forum serve`. A row or file a
  /// member inserts has the member as its creator (`forum.caller_id()`); rows stored before get
  /// theirs as step 21 gave app users theirs. A member's write that grows the bytes of a
  /// creator past `member_storage_bytes` in `forum.meta` (64 MiB; the owner sets it, 0 turns
  /// it off; members may read it) fails with check_violation and writes nothing, whatever
  /// client made it. Writes by a server (whose quota is `forum serve --storage-per-user`), by
  /// the board's owner, and the board's own bookkeeping inside another write (a thread's
  /// counts when someone comments on it) are not refused.
  static let memberStorageStep = """
    INSERT INTO forum.meta(key, value) VALUES ('member_storage_bytes', '\(64 << 20)')
    ON CONFLICT (key) DO NOTHING;
    CREATE OR REPLACE FUNCTION forum.objects_creator() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.is_moving() THEN NEW.creator := forum.caller_id(); END IF;
      RETURN NEW;
    END
    $$;
    CREATE OR REPLACE FUNCTION forum.within_member_storage(creator text, grown bigint)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      bound bigint;
      held bigint;
    BEGIN
      IF creator IS NULL OR grown <= 0 OR forum.is_server() OR forum.is_board_owner() THEN
        RETURN;
      END IF;
      -- Bookkeeping inside another write (trigger depth 2 and more) grows others' rows a few
      -- bytes; the member's own statement, and any row of theirs, is what is bounded.
      IF pg_trigger_depth() > 1 AND creator IS DISTINCT FROM forum.caller_id() THEN RETURN; END IF;
      bound := (SELECT value::bigint FROM forum.meta WHERE key = 'member_storage_bytes');
      IF bound IS NULL OR bound <= 0 THEN RETURN; END IF;
      held := coalesce((SELECT s.bytes FROM forum.storage s WHERE s.user_id = creator), 0);
      IF held > bound THEN
        RAISE EXCEPTION 'your objects would hold % bytes; the storage per user is % bytes',
          held, bound
          USING ERRCODE = 'check_violation',
                HINT = 'delete some first, or ask the board''s owner '
                       '(forum.meta member_storage_bytes)';
      END IF;
    END
    $$;
    REVOKE ALL ON FUNCTION forum.within_member_storage(text, bigint) FROM PUBLIC;
    CREATE OR REPLACE FUNCTION forum.objects_storage() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      before bigint := 0;
      after bigint;
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.creator IS NOT NULL THEN
        before := octet_length(OLD.data::text);
        UPDATE forum.storage SET bytes = bytes - before WHERE user_id = OLD.creator;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.creator IS NOT NULL THEN
        after := octet_length(NEW.data::text);
        INSERT INTO forum.storage(user_id, bytes) VALUES (NEW.creator, after)
        ON CONFLICT (user_id) DO UPDATE SET bytes = forum.storage.bytes + excluded.bytes;
        PERFORM forum.within_member_storage(NEW.creator,
          after - CASE WHEN TG_OP = 'UPDATE' AND OLD.creator IS NOT DISTINCT FROM NEW.creator
                       THEN before ELSE 0 END);
      END IF;
      RETURN NULL;
    END
    $$;
    CREATE OR REPLACE FUNCTION forum.files_storage() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      before bigint := 0;
      after bigint;
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.creator IS NOT NULL THEN
        before := octet_length(OLD.data);
        UPDATE forum.storage SET bytes = bytes - before WHERE user_id = OLD.creator;
      END IF;
      IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.creator IS NOT NULL THEN
        after := octet_length(NEW.data);
        INSERT INTO forum.storage(user_id, bytes) VALUES (NEW.creator, after)
        ON CONFLICT (user_id) DO UPDATE SET bytes = forum.storage.bytes + excluded.bytes;
        PERFORM forum.within_member_storage(NEW.creator,
          after - CASE WHEN TG_OP = 'UPDATE' AND OLD.creator IS NOT DISTINCT FROM NEW.creator
                       THEN before ELSE 0 END);
      END IF;
      RETURN NULL;
    END
    $$;
    """ + creatorsBackfill(from: "forum.users")

  /// Issue 28, step 25: the board's owner sets the storage bound per member from `forum` (`mod
  /// storage-per-member`), not only with psql: a member of `forum_owner` may not write
  /// `forum.meta`, so the owner's check runs here, as the schema's owner. 0 is no bound.
  static let memberStorageSettingStep = """
    CREATE OR REPLACE FUNCTION forum.set_member_storage_bytes(bound bigint) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.is_board_owner() THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403',
          MESSAGE = 'only the board''s owner sets the storage per member';
      END IF;
      IF bound IS NULL OR bound < 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'FA400',
          MESSAGE = 'the storage per member is a number of bytes (0: none)';
      END IF;
      INSERT INTO forum.meta(key, value) VALUES ('member_storage_bytes', bound::text)
      ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    END
    $$;
    REVOKE ALL ON FUNCTION forum.set_member_storage_bytes(bigint) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.set_member_storage_bytes(bigint) TO forum_member;
    """

  /// Issue 34: a GeoPoint's coordinate as a float8 column an index can hold (`forum index geo
  /// CLASS FIELD` makes the columns, `geoIndexSQL`). Row-level security lets only leakproof
  /// operators into an index condition; no jsonb operator is, float8's comparisons are. NULL
  /// for anything but a number within ±180 (no box or distance reaches past it), so no stored
  /// value makes the cast fail a write. Nested CASEs: `AND` does not promise an order.
  static let geoCoordinateStep = """
    CREATE OR REPLACE FUNCTION forum.geo_coordinate(point jsonb, axis text) RETURNS float8
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog
    AS $$
      SELECT CASE WHEN jsonb_typeof(point -> axis) = 'number' THEN
        CASE WHEN (point -> axis)::numeric BETWEEN -180 AND 180
          THEN (point -> axis)::numeric::float8 END END
    $$;
    GRANT EXECUTE ON FUNCTION forum.geo_coordinate(jsonb, text) TO forum_member;
    """

  /// The float8 column holding `axis` ("lat" or "lon") of the GeoPoint `field`.
  static func geoColumn(_ field: String, _ axis: String) -> String { "geo_\(field)_\(axis)" }

  /// A geo index (`IndexSpec(geoOf:field:)`): both coordinates as stored columns of both tables
  /// (the engine's WHERE clauses are the same for both), and on the public rows' table one
  /// index of the class's rows by latitude, then longitude: a box seeks its latitudes and
  /// checks longitudes in the index. Names are validated (`Validation.isName`).
  static func geoIndexSQL(_ spec: IndexSpec) -> [String] {
    let field = spec.fields[0]
    var statements: [String] = []
    for (axis, name) in [("lat", "latitude"), ("lon", "longitude")] {
      for target in ["forum.objects", "forum.private_objects"] {
        statements.append(
          """
          ALTER TABLE \(target) ADD COLUMN IF NOT EXISTS "\(geoColumn(field, axis))" float8
          GENERATED ALWAYS AS (forum.geo_coordinate(data -> '\(field)', '\(name)')) STORED
          """)
      }
    }
    let name = "objects_geo_\(spec.className)_\(field)".prefix(63)
    statements.append(
      """
      CREATE INDEX IF NOT EXISTS "\(name)" ON forum.objects
      ("\(geoColumn(field, "lat"))", "\(geoColumn(field, "lon"))", id)
      WHERE class = '\(spec.className)'
      """)
    statements.append("ANALYZE forum.objects")
    return statements
  }

  /// `steps` run by the SQL core's migrator; the version is recorded with the rules, at the
  /// end of `install`.
  static let migrator = SchemaMigrator<PostgresConnection>(steps: steps.map { .sql($0) }) {
    _, version in
    DatastoreError(.systemError, reason: BoardAccessReason.newerPostgresSchema(version: version))
  }

  /// The tables of the schema; each gets row-level security, enabled and forced.
  static let tables = [
    "meta", "objects", "files", "users", "counters", "changes", "read_positions", "revisions",
    "feed_lock", "secrets", "app_identities", "app_sessions", "private_objects", "private_changes",
    "private_search_text", "private_files", "changes_pruned", "storage", "app_role_members",
    "app_passwords",
  ]

  /// Creates or brings up to date the whole schema, in one transaction, as the current role
  /// (which becomes the owner of everything). Idempotent: running it again changes nothing.
  static func install(
    on connection: PostgresConnection, rules engineRules: EngineRules, indexes: [IndexSpec]
  ) throws {
    let rules = PostgresRules(engineRules)
    try connection.transaction {
      // Two owners running `forum init` at once take turns.
      try connection.execute("SELECT pg_advisory_xact_lock(7403311)")
      try createMemberRole(on: connection)
      try createServerRole(on: connection)
      try connection.execute(
        """
        CREATE SCHEMA IF NOT EXISTS forum;
        REVOKE ALL ON SCHEMA forum FROM PUBLIC;
        """)
      try migrator.migrate(connection)
      try connection.execute(functionsSQL)
      try connection.execute(appFunctionsSQL)
      try connection.execute(filesSQL)
      try connection.execute(rules.triggerSQL)
      try connection.execute(policiesSQL)
      for spec in indexes where spec.kind == .ordered {
        for statement in indexSQL(
          spec, table: rules.table(spec.className),
          presence: engineRules.presenceOrdered(spec.className))
        {
          try connection.execute(statement)
        }
      }
      for statement in rules.pairIndexSQL { try connection.execute(statement) }
      try movePrivateRows(rules, on: connection)
      try movePrivateFiles(on: connection)
      try PostgresSearch.install(
        TextSearch.fields(of: indexes), privateClasses: rules.privateClasses, on: connection)
      // New key columns have no statistics yet; without them the planner guesses a handful of
      // rows per value and sorts a long thread instead of walking its ordered index.
      try connection.execute("ANALYZE forum.objects; ANALYZE forum.private_objects")
      try connection.query(
        """
        INSERT INTO forum.meta(key, value)
        VALUES ('schema_version', $1), ('triggers', $2), ('rules', $3)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value
        """,
        [
          .text(String(steps.count)), .text(rules.fingerprint),
          .text(engineRules.encoding),
        ])
      try connection.execute(
        """
        INSERT INTO forum.meta(key, value) VALUES ('board_id', forum.random_id(16))
        ON CONFLICT (key) DO NOTHING
        """)
    }
  }

  /// Moves the rows that belong in `forum.private_objects` and that `forum.objects` still holds
  /// (a board made before step 8 or step 11, or rules that made a class private): rows of
  /// private classes and rows whose readers lack '*' (a child has its parent's readers), with
  /// their feed rows, as they are: no trigger runs (numbers, counters, dates stay); read
  /// positions and revisions, kept by object id, follow. Back the other way for a row that now
  /// belongs in `forum.objects`. Runs inside `forum init`'s transaction.
  static func movePrivateRows(_ rules: PostgresRules, on connection: PostgresConnection) throws {
    let names = rules.privateClasses.sorted().map { "'\($0)'" }.joined(separator: ", ")
    let list = names.isEmpty ? "NULL" : names
    let isPrivate = "(class IN (\(list)) OR NOT ('*' = ANY(readers)))"
    let pending = try connection.query(
      """
      SELECT EXISTS (SELECT 1 FROM forum.objects WHERE \(isPrivate))
        OR EXISTS (SELECT 1 FROM forum.private_objects WHERE NOT \(isPrivate))
        OR EXISTS (SELECT 1 FROM forum.changes WHERE \(isPrivate))
      """)
    guard pending.bool(0, 0) else { return }
    try connection.execute(
      """
      ALTER TABLE forum.objects DISABLE TRIGGER USER;
      ALTER TABLE forum.private_objects DISABLE TRIGGER USER;
      WITH moved AS (
        DELETE FROM forum.objects WHERE \(isPrivate)
        RETURNING class, object_id, create_date, update_date, readers, writers, data, creator
      )
      INSERT INTO forum.private_objects(class, object_id, create_date, update_date, readers,
                                        writers, data, creator, parent_id, reader_keys)
      SELECT m.*, p.parent_id,
        forum.reader_keys(m.class, p.parent_id, m.object_id, m.readers)
      FROM moved m, LATERAL (SELECT forum.private_parent(m.class, m.data) AS parent_id) p
      ORDER BY m.create_date, m.object_id;
      WITH moved AS (
        DELETE FROM forum.private_objects WHERE NOT \(isPrivate)
        RETURNING class, object_id, create_date, update_date, readers, writers, data, creator
      )
      INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers, data,
                                creator)
      SELECT * FROM moved ORDER BY create_date, object_id;
      ALTER TABLE forum.objects ENABLE TRIGGER USER;
      ALTER TABLE forum.private_objects ENABLE TRIGGER USER;
      WITH moved AS (
        DELETE FROM forum.changes WHERE \(isPrivate)
        RETURNING seq, class, object_id, kind, parent_id, number, readers
      )
      INSERT INTO forum.private_changes(reader, seq, class, object_id, kind, parent_id, number,
                                        readers)
      SELECT DISTINCT r, m.seq, m.class, m.object_id, m.kind, m.parent_id, m.number, m.readers
      FROM moved m, unnest(m.readers) r;
      """)
  }

  /// `forum_member` is shared by the cluster: made once, by a role that may create roles.
  private static func createMemberRole(on connection: PostgresConnection) throws {
    let exists = try connection.query("SELECT 1 FROM pg_roles WHERE rolname = 'forum_member'")
    guard exists.rowCount == 0 else { return }
    do {
      try connection.transaction {
        try connection.execute("CREATE ROLE forum_member NOLOGIN")
      }
    } catch let error as PostgresError where error.state == .insufficientPrivilege {
      throw DatastoreError(
        .noAccess,
        detail:
          "the role forum_member does not exist and this role may not create it: ask a superuser "
          + "to run `CREATE ROLE forum_member NOLOGIN`, then run `forum init` again")
    }
  }

  /// What a connection must find before it serves a person; each failure names its fix.
  /// Returns the rules `forum init` recorded, and whether the schema's owner opened a board whose
  /// rules or trigger SQL are not this forum's (`rules`; empty for "any"): the caller installs
  /// them then, as `forum init` would. A member is served by the rules the owner installed,
  /// whatever this forum would install: the database enforces those, and the client follows
  /// what the engine reports (a rule change never makes a board of the same schema version
  /// ask its members for `forum init`). The schema's owner is not asked to be a member.
  static func check(on connection: PostgresConnection, rules: EngineRules) throws -> (
    recorded: EngineRules, reinstall: Bool
  ) {
    let result: PostgresResult
    do {
      result = try connection.query(
        """
        SELECT r.oid IS NOT NULL, to_regclass('forum.meta') IS NOT NULL, session_user::text,
          r.oid IS NOT NULL AND pg_has_role(session_user, r.oid, 'MEMBER'),
          current_database()::text,
          coalesce((SELECT pg_get_userbyid(nspowner) = session_user FROM pg_namespace
                    WHERE nspname = 'forum'), false)
        FROM (SELECT 1) AS one LEFT JOIN pg_roles r ON r.rolname = 'forum_member'
        """)
    } catch let error as PostgresError {
      throw error.datastoreError
    }
    let role = result.text(0, 2) ?? "?"
    guard result.bool(0, 0), result.bool(0, 1) else {
      throw DatastoreError(
        .systemError,
        reason: BoardAccessReason.noForumSchema(database: result.text(0, 4) ?? "?"))
    }
    guard result.bool(0, 3) || result.bool(0, 5) else {
      throw DatastoreError(
        .noAccess,
        reason: BoardAccessReason.notForumMember(role: role))
    }
    let meta: PostgresResult
    do {
      meta = try connection.query(
        """
        SELECT (SELECT value FROM forum.meta WHERE key = 'schema_version'),
          (SELECT value FROM forum.meta WHERE key = 'triggers'),
          (SELECT value FROM forum.meta WHERE key = 'rules')
        """)
    } catch let error as PostgresError {
      throw error.datastoreError
    }
    let version = Int(meta.text(0, 0) ?? "") ?? 0
    try migrator.refuseNewer(version, of: connection)
    // Who runs what: the owner may be the one reading it.
    let older = DatastoreError(
      .systemError, reason: StoreReason.olderSchema(owner: result.bool(0, 5)))
    guard version == steps.count, let recordText = meta.text(0, 2),
      let recorded = try? EngineRules(record: JSONValue.parse(recordText))
    else { throw older }
    let sameTriggers = meta.text(0, 1) == PostgresRules(recorded).fingerprint
    let sameRules = rules == EngineRules() || rules.signature == recorded.signature
    return (recorded, !(sameTriggers && sameRules) && result.bool(0, 5))
  }

  /// The SQL expression for a field: built-in fields are columns; the rest live in `data`, a
  /// dotted path reaching into nested objects. Values compare as jsonb.
  /// What a listing orders by: a field's value, or for a flag (`EngineRules.presenceOrdered`)
  /// whether the object has it, which sorts the same on every engine (a descending order would
  /// put objects without the field first here, last on SQLite).
  /// The dates are ordered as their bigint columns, which sort as their jsonb does: ordered as
  /// `to_jsonb(…)`, NCMB's default `-createDate` sorted every row of the class (0.9 s for
  /// 100,000 threads) where `objects_class_create_date` walks 20 (issue 18).
  static func orderExpression(for field: String, presence: Set<String>) -> String {
    if presence.contains(field) { return "((o.data->\(SQL.quotedLiteral(field))) IS NOT NULL)" }
    switch field {
    case "createDate": return "o.create_date"
    case "updateDate": return "o.update_date"
    default: return expression(for: field)
    }
  }

  static func expression(for field: String) -> String {
    switch field {
    case "objectId": return "to_jsonb(o.object_id)"
    case "createDate": return "to_jsonb(o.create_date)"
    case "updateDate": return "to_jsonb(o.update_date)"
    default:
      let parts = field.split(separator: ".")
      if parts.count == 1 { return "(o.data->\(SQL.quotedLiteral(field)))" }
      return "(o.data#>\(SQL.quotedLiteral("{" + parts.joined(separator: ",") + "}")))"
    }
  }

  /// The stored text column a field's equality is tested on (`key_<field>`), or nil for the
  /// built-in columns. Row-level security lets only leakproof operators into an index condition,
  /// and no jsonb operator is leakproof, so `data->'number' = $1` could never use an index for a
  /// member; `key_number = $1` (text equality is leakproof) can.
  /// Named by the field as it stands (case and dots kept: `note` and `Note` are two fields).
  static func keyColumn(for field: String) -> String? {
    switch field {
    case "objectId", "createDate", "updateDate": return nil
    default: return identifier("key_" + field)
    }
  }

  /// `name` as PostgreSQL keeps it whole (63 bytes); a longer one is cut to its start and a hash
  /// of the whole, so that two names cut alike stay two (PostgreSQL would cut both silently).
  /// The names are ASCII (`Validation.isName`). `keyColumnNamesStep` writes the same in SQL.
  static func identifier(_ name: String) -> String {
    guard name.utf8.count > 63 else { return name }
    let digest = SHA256.hex(SHA256.hash(name)).prefix(16)
    return String(name.prefix(46)) + "_" + digest
  }

  /// For each field a key column (made once, kept by the table), then two partial indexes per
  /// spec: the leading fields' keys with the last field's value (equality, then order: a page is
  /// one ordered index walk), and every field's key (equality on all of them). The row id breaks
  /// ties. Names are validated (`Validation.isName`).
  /// A flag among the fields (`presence`) is indexed as the listings order it: by whether the
  /// object has it (`orderExpression`).
  static func indexSQL(
    _ spec: IndexSpec, table: String = "forum.objects", presence: Set<String> = []
  ) -> [String] {
    var statements: [String] = []
    // The key columns are on both tables: the engine's WHERE clauses are the same for both.
    for field in spec.fields where !presence.contains(field) {
      guard let column = keyColumn(for: field) else { continue }
      let path = field.split(separator: ".").joined(separator: ",")
      for target in ["forum.objects", "forum.private_objects"] {
        statements.append(
          """
          ALTER TABLE \(target) ADD COLUMN IF NOT EXISTS "\(column)" text
          GENERATED ALWAYS AS (data #>> '{\(path)}') STORED
          """)
      }
    }
    func key(_ field: String) -> String {
      if presence.contains(field) {
        return orderExpression(for: field, presence: presence).replacing("o.", with: "")
      }
      // A built-in field is its column (`to_jsonb` is not immutable: no index may hold it).
      return keyColumn(for: field).map { "\"\($0)\"" }
        ?? orderExpression(for: field, presence: presence).replacing("o.", with: "")
    }
    let ordered =
      spec.fields.dropLast().map(key)
      + [
        orderExpression(for: spec.fields.last!, presence: presence).replacing("o.", with: "")
      ]
    let home = table.dropFirst("forum.".count)
    // The class and fields as they stand, parenthesized: `Note`'s (`tag`, `x`) and `Note_tag`'s
    // (`x`) are two names, and so are `note`'s and `Note`'s. Indexes made before were named in
    // lower case with `_` for each separator (`legacy`), so that two specs could meet in one
    // name and the second was never made: one found holding this spec's columns is renamed.
    let legacyBase = "objects_\(spec.className)_\(spec.fields.joined(separator: "_"))"
      .replacing(".", with: "_").lowercased()
    let base = "objects_\(spec.className)(\(spec.fields.joined(separator: ",")))"
    func marker(_ field: String) -> [String] {
      presence.contains(field) ? expressionMarker(field) : keyMarker(field)
    }
    for (suffix, columns, markers) in [
      ("_by", ordered, spec.fields.dropLast().map(marker) + [expressionMarker(spec.fields.last!)]),
      ("_eq", spec.fields.map(key), spec.fields.map(marker)),
    ] {
      let name = identifier(base + suffix)
      let legacy = (legacyBase + suffix).prefix(63)
      // A board made before the split had the index on forum.objects.
      statements.append(
        """
        DO $$ BEGIN
          IF EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = 'forum'
                     AND indexname = '\(legacy)' AND tablename <> '\(home)') THEN
            DROP INDEX forum."\(legacy)";
          END IF;
        END $$
        """)
      // The class, and each field in one of the ways it may show.
      let test = ([["(class = '\(spec.className)'::text)"]] + markers).map { ways in
        "(" + ways.map { "strpos(def, \(SQL.quotedLiteral($0))) > 0" }.joined(separator: " OR ")
          + ")"
      }
      statements.append(
        """
        DO $$ DECLARE def text := pg_get_indexdef(to_regclass('forum."\(legacy)"')); BEGIN
          IF def IS NOT NULL AND to_regclass('forum."\(name)"') IS NULL
            AND \(test.joined(separator: " AND ")) THEN
            ALTER INDEX forum."\(legacy)" RENAME TO "\(name)";
          END IF;
        END $$
        """)
      statements.append(
        """
        CREATE INDEX IF NOT EXISTS "\(name)" ON \(table)
        (\(columns.joined(separator: ", ")), id) WHERE class = '\(spec.className)'
        """)
    }
    return statements
  }

  /// How `pg_get_indexdef` shows a field's key column in an index's columns (quoted unless
  /// plain lower case), with what follows it: any one of the texts marks it.
  private static func keyMarker(_ field: String) -> [String] {
    guard let column = keyColumn(for: field) else { return expressionMarker(field) }
    let plain = column.utf8.allSatisfy {
      (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_")
    }
    let shown = plain ? column : "\"\(column)\""
    return [shown + ",", shown + ")"]
  }

  /// How `pg_get_indexdef` shows the field's value in an index (`orderExpression`).
  private static func expressionMarker(_ field: String) -> [String] {
    switch field {
    case "objectId": return ["object_id"]
    case "createDate": return ["create_date"]
    case "updateDate": return ["update_date"]
    default:
      let parts = field.split(separator: ".")
      return parts.count == 1
        ? ["'\(field)'::text"] : ["'{\(parts.joined(separator: ","))}'::text[]"]
    }
  }

  /// Functions every table and trigger uses. `SECURITY DEFINER` only where a member needs the
  /// owner's reach for the engine's own bookkeeping, always with `search_path` pinned.
  static let functionsSQL = """
    -- No SET and every name qualified, so a statement that calls it inlines it (issue 29: with
    -- SET it was planned again at every call, 50 µs in each session check).
    CREATE OR REPLACE FUNCTION forum.now_ms() RETURNS bigint
    LANGUAGE sql VOLATILE
    AS $$
      SELECT pg_catalog.int8(pg_catalog.extract('epoch', pg_catalog.clock_timestamp())
                             OPERATOR(pg_catalog.*) 1000)
    $$;

    CREATE OR REPLACE FUNCTION forum.random_id(length integer) RETURNS text
    LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT string_agg(substr(
        'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
        1 + (get_byte(b, i) % 62), 1), '' ORDER BY i)
      FROM (SELECT decode(md5(gen_random_uuid()::text || clock_timestamp()::text), 'hex') || 
                   decode(md5(gen_random_uuid()::text), 'hex') AS b) AS bytes,
           generate_series(0, length - 1) AS i
    $$;

    -- The caller's identity, asked by every read: PL/pgSQL, whose plans a session keeps (an SQL
    -- function with SET or SECURITY DEFINER is never inlined and is planned again by every
    -- statement that calls it: about 1 ms each, several per read). One generic plan each, made
    -- at a session's first call: every later call costs the same (the side-channel tests
    -- compare buffers), whatever the plan cache would have chosen by then. Issue 29: each
    -- nested call, SQL statement and regular expression here is paid twice by every read of
    -- `forum serve` (the read policy and `forum.private_rows`), so a server's identity is one
    -- statement (`forum.session_principals`) behind one role check of two plain expressions.

    -- True when the connecting role is a server (`forum serve`): a member of forum_server. A
    -- server has no user of its own; it is whoever `forum.act_as` made it (issue 18).
    CREATE OR REPLACE FUNCTION forum.is_server() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      server_role oid := to_regrole('forum_server');
    BEGIN
      RETURN server_role IS NOT NULL AND pg_has_role(session_user, server_role, 'MEMBER');
    END
    $$;

    -- For a server (its callers ask `forum.is_server` first; no grant): the principals of the
    -- live session whose token hash `forum.act_as` put in forum.acting (its user, then
    -- `role:` and each of the user's roles), NULL for none. The hash is checked without a
    -- regular expression (`{64}` cost 40 µs a call).
    CREATE OR REPLACE FUNCTION forum.session_principals() RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
      hex text := current_setting('forum.acting', true);
    BEGIN
      IF length(hex) IS DISTINCT FROM 64 OR translate(hex, '0123456789abcdef', '') <> '' THEN
        RETURN NULL;
      END IF;
      RETURN (SELECT ARRAY['*', s.user_id]
                     || ARRAY(SELECT 'role:' || m.role FROM forum.app_role_members m
                              WHERE m.user_id = s.user_id ORDER BY m.role)
              FROM forum.app_sessions s
              WHERE s.token_hash = decode(hex, 'hex') AND s.expires_at > forum.now_ms());
    END
    $$;

    -- The app user a server acts for: the live session whose token hash `forum.act_as` put in
    -- the setting forum.acting. Anyone may set the setting, so it counts only for a server,
    -- and only while the session it names lives (a logout or expiry ends it at once).
    CREATE OR REPLACE FUNCTION forum.acting_user() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.is_server() THEN RETURN NULL; END IF;
      RETURN (forum.session_principals())[2];
    END
    $$;

    -- The caller's user id: the row mapped to the connecting role (never the current_user of a
    -- definer function), or for a server the app user it acts for. Members cannot read
    -- forum.users; this tells each only its own id.
    CREATE OR REPLACE FUNCTION forum.caller_id() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    BEGIN
      IF forum.is_server() THEN RETURN (forum.session_principals())[2]; END IF;
      RETURN (SELECT user_id FROM forum.users WHERE role_name = session_user
              AND role_oid = to_regrole(quote_ident(session_user)));
    END
    $$;

    -- An app user has no database role, so no board role either.
    CREATE OR REPLACE FUNCTION forum.principals() RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
      me text;
    BEGIN
      IF forum.is_server() THEN RETURN coalesce(forum.session_principals(), ARRAY['*']); END IF;
      me := forum.caller_id();
      RETURN ARRAY['*'] || CASE WHEN me IS NULL THEN '{}'::text[] ELSE ARRAY[me] END
        || coalesce((SELECT array_agg('role:' || substr(r.rolname, 12) ORDER BY r.rolname)
                     FROM pg_roles r
                     WHERE r.rolname LIKE 'forum\\_role\\_%'
                       AND pg_has_role(session_user, r.oid, 'MEMBER')), '{}'::text[]);
    END
    $$;

    -- Hands out the next value of a named counter; only the definer triggers call it.
    CREATE OR REPLACE FUNCTION forum.next_value(counter text) RETURNS bigint
    LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
    AS $$
      INSERT INTO forum.counters(name, value) VALUES (counter, 1)
      ON CONFLICT (name) DO UPDATE SET value = forum.counters.value + 1
      RETURNING value
    $$;

    -- Finds or creates the user of the connecting role: the engine's sign-in. Only roles granted
    -- forum_member get one, and the board's owner (who needs no membership to appoint
    -- moderators: `forum init`'s role, set up as the README says).
    CREATE OR REPLACE FUNCTION forum.sign_in() RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      found_id text;
      now_ms bigint := forum.now_ms();
      my_oid oid := (SELECT oid FROM pg_roles WHERE rolname = session_user);
    BEGIN
      IF NOT pg_has_role(session_user, 'forum_member', 'MEMBER') AND NOT forum.is_board_owner() THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403',
          MESSAGE = format('role %s is not a member of forum_member', session_user);
      END IF;
      SELECT user_id INTO found_id FROM forum.users
      WHERE role_name = session_user AND role_oid = my_oid;
      IF found_id IS NOT NULL THEN RETURN found_id; END IF;
      -- A mapping left by a dropped role of the same name belongs to nobody any more.
      DELETE FROM forum.users WHERE role_name = session_user AND role_oid IS DISTINCT FROM my_oid;
      found_id := forum.random_id(16);
      INSERT INTO forum.users(role_name, role_oid, user_id) VALUES (session_user, my_oid, found_id)
      ON CONFLICT (role_name) DO NOTHING;
      IF NOT FOUND THEN
        RETURN (SELECT user_id FROM forum.users WHERE role_name = session_user);
      END IF;
      INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers, data)
      VALUES ('user', found_id, now_ms, now_ms, ARRAY['*'], ARRAY[found_id],
              jsonb_build_object('userName', forum.random_id(10)));
      RETURN found_id;
    END
    $$;

    -- True when the statement runs inside one of the owner's bookkeeping functions (or is the
    -- owner's own): only then may managed fields change.
    CREATE OR REPLACE FUNCTION forum.is_bookkeeping() RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT current_user = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace
                             WHERE nspname = 'forum')
    $$;

    -- Files: the engine's clock and the stored size, whatever the client sent.
    CREATE OR REPLACE FUNCTION forum.files_before_insert() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      -- A file changing tables keeps its dates (`forum.files_move`).
      IF forum.is_moving() THEN RETURN NEW; END IF;
      NEW.create_date := forum.now_ms();
      NEW.update_date := NEW.create_date;
      NEW.file_size := octet_length(NEW.data);
      RETURN NEW;
    END
    $$;
    DROP TRIGGER IF EXISTS a_guard ON forum.files;
    CREATE TRIGGER a_guard BEFORE INSERT ON forum.files
      FOR EACH ROW EXECUTE FUNCTION forum.files_before_insert();

    -- The newest change's sequence, whoever may read it: a reader's cursor moves past rows it
    -- may not read instead of walking them again. (It tells how many changes there were, not
    -- what or whose.) STABLE: it sees the calling statement's snapshot.
    CREATE OR REPLACE FUNCTION forum.latest_change() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT greatest((SELECT coalesce(max(seq), 0) FROM forum.changes),
                      (SELECT coalesce(max(seq), 0) FROM forum.private_changes))
    $$;

    -- The caller's read positions among some objects, and one of them: the caller's own rows
    -- only, by the key (user, object), so nothing is looked up among anyone else's.
    CREATE OR REPLACE FUNCTION forum.read_positions_of(targets text[])
    RETURNS TABLE(object_id text, "position" bigint)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT rp.object_id, rp.position FROM forum.read_positions rp
      WHERE rp.user_id = (SELECT forum.caller_id()) AND rp.object_id = ANY(targets)
    $$;

    -- All of them, as one set (schema step 14): an unread filter hashes it once.
    CREATE OR REPLACE FUNCTION forum.my_read_positions()
    RETURNS TABLE(object_id text, "position" bigint)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 1000 SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT rp.object_id, rp.position FROM forum.read_positions rp
      WHERE rp.user_id = (SELECT forum.caller_id())
    $$;

    CREATE OR REPLACE FUNCTION forum.read_position(target text) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT rp.position FROM forum.read_positions rp
      WHERE rp.user_id = (SELECT forum.caller_id()) AND rp.object_id = target
    $$;

    -- Moves the caller's positions forward (never back). A position for an object the caller
    -- cannot read is the caller's own row and tells nothing; the engine marks readable ones.
    CREATE OR REPLACE FUNCTION forum.mark_read(targets text[], positions bigint[])
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      me text := forum.caller_id();
    BEGIN
      IF me IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FA401', MESSAGE = 'sign in first';
      END IF;
      INSERT INTO forum.read_positions AS rp (user_id, object_id, position)
      SELECT me, t.target, max(t.upto)
      FROM unnest(targets, positions) AS t(target, upto)
      WHERE t.target IS NOT NULL
      GROUP BY t.target
      ON CONFLICT (user_id, object_id) DO UPDATE
        SET position = greatest(rp.position, excluded.position);
    END
    $$;

    -- True for the schema's owner's own session (administration, tests planting rows).
    CREATE OR REPLACE FUNCTION forum.is_trusted() RETURNS boolean
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    BEGIN
      RETURN session_user = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace
                             WHERE nspname = 'forum');
    END
    $$;

    -- The caller's rows of a private class (see step 8 of `PostgresSchema.steps`): all of them,
    -- those under one parent, or those among some ids. The lookup is by reader keys made from the
    -- caller's own principals, so it touches only rows the caller may read: what it costs does
    -- not depend on whether anyone else's row matches. The schema's owner gets every row.
    -- The only index a member's lookup can use is the keys' (the class is compared as an
    -- expression no index holds, and sequential scans are off), so one generic plan, made at a
    -- session's first call and kept, is as safe as a new one each call, which cost 2 ms on
    -- every public read; and every call after the first costs the same buffers. The scan
    -- settings are the function's own (issue 28): a member's session turning index or bitmap
    -- scans off does not turn the lookup into a walk of everyone's rows.
    CREATE OR REPLACE FUNCTION forum.private_rows(want_class text, want_parent text,
                                                  want_ids text[])
    RETURNS SETOF forum.private_objects
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 20
    SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_indexscan = on
    SET enable_bitmapscan = on
    SET plan_cache_mode = force_generic_plan
    AS $$
    DECLARE
      who text[];
      keys text[];
    BEGIN
      IF forum.is_trusted() THEN
        -- Planned with the values, so the owner's lookups use the indexes they can.
        RETURN QUERY EXECUTE
          'SELECT o.* FROM forum.private_objects o
           WHERE ($1 IS NULL OR o.class = $1) AND ($2 IS NULL OR o.parent_id = $2)
             AND ($3 IS NULL OR o.object_id = ANY($3))'
          USING want_class, want_parent, want_ids;
        RETURN;
      END IF;
      who := forum.principals();
      -- Among ids, of any class (NULL): `fetch`.
      IF want_class IS NULL THEN
        keys := ARRAY(SELECT 'i/' || p || '/' || i FROM unnest(who) p, unnest(want_ids) i);
        RETURN QUERY SELECT o.* FROM forum.private_objects o WHERE o.reader_keys && keys;
        RETURN;
      END IF;
      IF want_ids IS NOT NULL THEN
        keys := ARRAY(SELECT 'i/' || p || '/' || i FROM unnest(who) p, unnest(want_ids) i);
      ELSIF want_parent IS NOT NULL THEN
        keys := ARRAY(SELECT 'p/' || want_class || '/' || p || '/' || want_parent
                      FROM unnest(who) p);
      ELSE
        keys := ARRAY(SELECT 'c/' || want_class || '/' || p FROM unnest(who) p);
      END IF;
      RETURN QUERY SELECT o.* FROM forum.private_objects o
        WHERE o.reader_keys && keys AND o.class || '' = want_class;
    END
    $$;

    -- Earlier revisions of an object the caller may read (issue 22: members hold no grant on
    -- forum.revisions, whose index on object_id told a probe that a private post had been
    -- edited): the object is found first, a public row or one of the caller's own private
    -- rows, and only then its revisions. `revision_totals`: how many, and the last number.
    CREATE OR REPLACE FUNCTION forum.may_read(class_name text, target text) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT EXISTS (SELECT 1 FROM forum.objects o WHERE o.object_id = target
                     AND o.class = class_name
                     AND (forum.is_trusted() OR o.readers && forum.principals()))
        OR EXISTS (SELECT 1 FROM forum.private_rows(class_name, NULL, ARRAY[target]) p
                   WHERE p.object_id = target)
    $$;

    CREATE OR REPLACE FUNCTION forum.revisions_of(class_name text, target text, skipped bigint,
                                                  lim bigint)
    RETURNS TABLE(date bigint, data jsonb, number bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    BEGIN
      IF NOT forum.may_read(class_name, target) THEN RETURN; END IF;
      RETURN QUERY SELECT r.date, r.data, r.number FROM forum.revisions r
        WHERE r.object_id = target ORDER BY r.id LIMIT lim OFFSET skipped;
    END
    $$;

    CREATE OR REPLACE FUNCTION forum.revision_totals(class_name text, target text)
    RETURNS TABLE(total bigint, last bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan
    AS $$
    BEGIN
      IF NOT forum.may_read(class_name, target) THEN
        RETURN QUERY SELECT 0::bigint, 0::bigint;
        RETURN;
      END IF;
      RETURN QUERY SELECT count(*), coalesce(max(r.number), 0) FROM forum.revisions r
        WHERE r.object_id = target;
    END
    $$;

    -- The reader keys of a private row: for each reader, its class, its class and parent, and
    -- its id (`forum.private_rows` looks them up).
    CREATE OR REPLACE FUNCTION forum.reader_keys(row_class text, row_parent text,
                                                 row_id text, row_readers text[])
    RETURNS text[]
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT coalesce(array_agg(k), '{}'::text[]) FROM unnest(row_readers) r,
        LATERAL (VALUES ('c/' || row_class || '/' || r), ('i/' || r || '/' || row_id),
                        ('p/' || row_class || '/' || r || '/' || row_parent)) AS keys(k)
      WHERE k IS NOT NULL
    $$;

    -- An array field after an NCMB array change (`change`: {"op": "add" | "addUnique" |
    -- "remove", "objects": [...], "relation": class or absent}), from its value `current`: a
    -- missing or null field is an empty array; a relation lives in its owner's data as
    -- {"__type":"Relation","className":X,"objects":[pointers]}. A field holding anything
    -- else is refused (FA400 naming it), so nothing is written.
    CREATE OR REPLACE FUNCTION forum.array_changed(field text, current jsonb, change jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      related text := change->>'relation';
      given jsonb := coalesce(change->'objects', '[]'::jsonb);
      elements jsonb;
      result jsonb;
    BEGIN
      IF current IS NULL OR jsonb_typeof(current) = 'null' THEN
        elements := '[]'::jsonb;
      ELSIF related IS NULL AND jsonb_typeof(current) = 'array' THEN
        elements := current;
      ELSIF related IS NOT NULL AND jsonb_typeof(current) = 'object'
          AND current->>'__type' = 'Relation' AND current->>'className' = related
          AND coalesce(jsonb_typeof(current->'objects'), 'array') = 'array' THEN
        elements := coalesce(current->'objects', '[]'::jsonb);
      ELSE
        RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = field;
      END IF;
      IF change->>'op' = 'add' THEN
        result := elements || given;
      ELSIF change->>'op' = 'addUnique' THEN
        result := elements || coalesce((SELECT jsonb_agg(v.value ORDER BY v.n)
          FROM jsonb_array_elements(given) WITH ORDINALITY v(value, n)
          WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(elements) e
                            WHERE e.value = v.value)), '[]'::jsonb);
      ELSE
        result := coalesce((SELECT jsonb_agg(e.value ORDER BY e.n)
          FROM jsonb_array_elements(elements) WITH ORDINALITY e(value, n)
          WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(given) v
                            WHERE v.value = e.value)), '[]'::jsonb);
      END IF;
      IF related IS NOT NULL THEN
        result := jsonb_build_object('__type', 'Relation', 'className', related,
                                     'objects', result);
      END IF;
      RETURN result;
    END
    $$;

    -- Changes an object of a private class, as `UPDATE forum.objects` does for the others: the
    -- caller must be able to read it (else it is not found) and write it; the triggers keep the
    -- managed fields. `increments` adds to numbers, or changes arrays where it holds an object
    -- (`forum.array_changed`); NULL readers or writers keep them.
    CREATE OR REPLACE FUNCTION forum.update_object(class_name text, target text,
      removed text[], kept jsonb, increments jsonb, new_readers text[], new_writers text[],
      narrowing text[])
    RETURNS SETOF forum.private_objects
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      found_row forum.private_objects%ROWTYPE;
      changed jsonb;
      field text;
      delta jsonb;
    BEGIN
      SELECT p.* INTO found_row FROM forum.private_rows(class_name, NULL, ARRAY[target]) p
      WHERE p.object_id = target;
      IF NOT FOUND OR NOT (narrowing IS NULL OR found_row.readers && narrowing) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
      END IF;
      IF NOT (forum.is_trusted() OR found_row.writers && forum.principals())
         OR NOT (narrowing IS NULL OR found_row.writers && narrowing) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'No access with ACL.';
      END IF;
      SELECT o.data INTO changed FROM forum.private_objects o WHERE o.id = found_row.id FOR UPDATE;
      changed := (changed - coalesce(removed, '{}'::text[])) || coalesce(kept, '{}'::jsonb);
      FOR field, delta IN SELECT * FROM jsonb_each(coalesce(increments, '{}'::jsonb)) LOOP
        IF jsonb_typeof(delta) = 'object' THEN
          changed := changed || jsonb_build_object(field,
            forum.array_changed(field, changed->field, delta));
        ELSE
          changed := changed || jsonb_build_object(field,
            coalesce((changed->>field)::bigint, 0) + (delta #>> '{}')::bigint);
        END IF;
      END LOOP;
      RETURN QUERY UPDATE forum.private_objects o
        SET data = changed, readers = coalesce(new_readers, o.readers),
            writers = coalesce(new_writers, o.writers)
        WHERE o.id = found_row.id
        RETURNING o.*;
    END
    $$;

    -- The feed's rows of private objects the caller may read, in (after, upto], at most `lim`:
    -- each reader's own rows, by the index on (reader, seq).
    CREATE OR REPLACE FUNCTION forum.private_changes(after bigint, upto bigint, lim bigint)
    RETURNS TABLE(seq bigint, class text, object_id text, kind smallint, parent_id text,
                  number bigint, readers text[])
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 20
    SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_indexscan = on
    SET enable_bitmapscan = on
    SET plan_cache_mode = force_custom_plan
    AS $$
    BEGIN
      IF forum.is_trusted() THEN
        RETURN QUERY SELECT DISTINCT ON (c.seq) c.seq, c.class, c.object_id, c.kind, c.parent_id,
            c.number, c.readers
          FROM forum.private_changes c WHERE c.seq > after AND c.seq <= upto
          ORDER BY c.seq LIMIT lim;
        RETURN;
      END IF;
      RETURN QUERY SELECT DISTINCT ON (c.seq) c.seq, c.class, c.object_id, c.kind, c.parent_id,
          c.number, c.readers
        FROM unnest(forum.principals()) AS p(reader),
          LATERAL (SELECT * FROM forum.private_changes x
                   WHERE x.reader = p.reader AND x.seq > after AND x.seq <= upto
                   ORDER BY x.seq LIMIT lim) c
        ORDER BY c.seq LIMIT lim;
    END
    $$;

    -- The board's owner: the schema's owner, or a member of the role forum_owner.
    CREATE OR REPLACE FUNCTION forum.is_board_owner() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT session_user = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace
                             WHERE nspname = 'forum')
        OR coalesce((SELECT pg_has_role(session_user, r.oid, 'MEMBER') FROM pg_roles r
                     WHERE r.rolname = 'forum_owner'), false)
    $$;

    -- What a `StewardRule` lets its stewards do: defaults for rules that declare none, remade
    -- by the rules' SQL (`PostgresRules.stewardSQL`) when they do.
    CREATE OR REPLACE FUNCTION forum.keeps_role(board_role text) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$ SELECT false $$;
    CREATE OR REPLACE FUNCTION forum.may_set_setting(setting text) RETURNS boolean
    LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$ SELECT false $$;

    -- Grants or revokes a board role: the board's owner, or a steward for the role it keeps
    -- (`forum.keeps_role`). A member's database role gets forum_role_<name>; an app user (no
    -- database role: a key at the ssh door, an app's user) a row of forum.app_role_members,
    -- which `forum.principals()` reads for a server. Runs as the schema's owner, who may create
    -- and grant roles. Only the owner gives a role to the owner.
    CREATE OR REPLACE FUNCTION forum.set_board_role(board_role text, target text, member boolean)
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      target_role name;
      group_role text := 'forum_role_' || board_role;
      owner boolean := forum.is_board_owner();
    BEGIN
      -- A steward keeps others' roles, never their own (a banned moderator stays banned).
      IF NOT owner AND (NOT forum.keeps_role(board_role) OR target = forum.caller_id()) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'only the board''s owner manages roles';
      END IF;
      IF board_role !~ '^[A-Za-z0-9_-]{1,50}$' THEN
        RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = 'role';
      END IF;
      SELECT r.rolname INTO target_role FROM forum.users u JOIN pg_roles r ON r.oid = u.role_oid
      WHERE u.user_id = target;
      IF target_role IS NULL THEN
        IF NOT EXISTS (SELECT 1 FROM forum.objects WHERE class = 'user' AND object_id = target) THEN
          RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';
        END IF;
        IF member THEN
          INSERT INTO forum.app_role_members(role, user_id) VALUES (board_role, target)
          ON CONFLICT DO NOTHING;
        ELSE
          DELETE FROM forum.app_role_members WHERE role = board_role AND user_id = target;
        END IF;
        RETURN;
      END IF;
      IF member AND NOT owner AND (
          target_role = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'forum')
          OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'forum_owner'
                     AND pg_has_role(target_role, r.oid, 'MEMBER'))) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'nobody but the owner changes the owner''s roles';
      END IF;
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = group_role) THEN
        BEGIN
          EXECUTE format('CREATE ROLE %I NOLOGIN', group_role);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END;
      END IF;
      IF member THEN
        EXECUTE format('GRANT %I TO %I', group_role, target_role);
      ELSE
        EXECUTE format('REVOKE %I FROM %I', group_role, target_role);
      END IF;
    END
    $$;

    -- The users holding a board role, database roles' and app users': the board's owner, or a
    -- steward for the role it keeps.
    CREATE OR REPLACE FUNCTION forum.board_role_members(board_role text) RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.is_board_owner() AND NOT forum.keeps_role(board_role) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'only the board''s owner manages roles';
      END IF;
      RETURN QUERY SELECT u.user_id FROM forum.users u
        JOIN pg_auth_members m ON m.member = u.role_oid
        JOIN pg_roles g ON g.oid = m.roleid AND g.rolname = 'forum_role_' || board_role
        UNION SELECT a.user_id FROM forum.app_role_members a WHERE a.role = board_role
        ORDER BY 1;
    END
    $$;

    -- The board's settings (`StewardRule.settings`), kept in forum.meta as `setting.<name>`:
    -- every member reads them; the owner and the stewards set them (`forum.may_set_setting`).
    CREATE OR REPLACE FUNCTION forum.board_setting(setting text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$ SELECT value FROM forum.meta WHERE key = 'setting.' || setting $$;
    CREATE OR REPLACE FUNCTION forum.set_board_setting(setting text, setting_value text)
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.may_set_setting(setting) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'only the board''s keepers set that';
      END IF;
      IF setting_value IS NULL THEN
        DELETE FROM forum.meta WHERE key = 'setting.' || setting;
      ELSE
        INSERT INTO forum.meta(key, value) VALUES ('setting.' || setting, setting_value)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
      END IF;
    END
    $$;

    -- Deletes, as the owner (members hold no DELETE grant, see policiesSQL), of what the caller
    -- may write: `narrowing` (the engine's principals for the call, NULL for all) narrows, never
    -- widens. The schema's owner may delete anything. A member's user is their database role's
    -- and stays; an app user (a server acting for it) may delete its own, which ends its
    -- sessions and forgets its anonymous id. True when a row went.
    CREATE OR REPLACE FUNCTION forum.delete_object(class_name text, target text, narrowing text[])
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      private_id bigint;
      trusted boolean := session_user = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace
                                         WHERE nspname = 'forum');
      app_user boolean := class_name = 'user' AND forum.is_server()
                          AND target = forum.acting_user();
    BEGIN
      DELETE FROM forum.objects
      WHERE object_id = target AND class = class_name
        AND (trusted OR (class <> 'user' AND writers && forum.principals())
             OR (app_user AND writers && forum.principals()))
        AND (narrowing IS NULL OR writers && narrowing);
      IF FOUND THEN
        IF class_name = 'user' THEN
          DELETE FROM forum.app_sessions WHERE user_id = target;
          DELETE FROM forum.app_identities WHERE user_id = target;
          DELETE FROM forum.app_passwords WHERE user_id = target;
        END IF;
        RETURN true;
      END IF;
      -- A private class: found from the caller's own rows first.
      SELECT p.id INTO private_id FROM forum.private_rows(class_name, NULL, ARRAY[target]) p
      WHERE p.object_id = target;
      IF private_id IS NULL THEN RETURN false; END IF;
      DELETE FROM forum.private_objects
      WHERE id = private_id AND (trusted OR writers && forum.principals())
        AND (narrowing IS NULL OR writers && narrowing);
      RETURN FOUND;
    END
    $$;

    REVOKE ALL ON FUNCTION forum.delete_object(text, text, text[]) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.delete_object(text, text, text[]) TO forum_member;

    REVOKE ALL ON FUNCTION forum.is_board_owner(), forum.set_board_role(text, text, boolean),
      forum.board_role_members(text), forum.board_setting(text),
      forum.set_board_setting(text, text), forum.keeps_role(text), forum.may_set_setting(text)
      FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.is_board_owner(), forum.set_board_role(text, text, boolean),
      forum.board_role_members(text), forum.board_setting(text),
      forum.set_board_setting(text, text) TO forum_member;

    REVOKE ALL ON FUNCTION forum.is_server(), forum.acting_user(), forum.session_principals()
      FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.is_server(), forum.acting_user() TO forum_member;

    REVOKE ALL ON FUNCTION forum.now_ms(), forum.random_id(integer), forum.caller_id(),
      forum.principals(), forum.next_value(text), forum.sign_in(), forum.is_bookkeeping(),
      forum.files_before_insert(), forum.latest_change(), forum.is_trusted(),
      forum.private_rows(text, text, text[]), forum.reader_keys(text, text, text, text[]),
      forum.update_object(text, text, text[], jsonb, jsonb, text[], text[], text[]),
      forum.private_changes(bigint, bigint, bigint), forum.read_positions_of(text[]),
      forum.read_position(text), forum.my_read_positions(), forum.mark_read(text[], bigint[]),
      forum.may_read(text, text), forum.revisions_of(text, text, bigint, bigint),
      forum.revision_totals(text, text), forum.array_changed(text, jsonb, jsonb) FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.now_ms(), forum.caller_id(), forum.principals(),
      forum.sign_in(), forum.is_bookkeeping(), forum.latest_change(), forum.is_trusted(),
      forum.private_rows(text, text, text[]),
      forum.update_object(text, text, text[], jsonb, jsonb, text[], text[], text[]),
      forum.private_changes(bigint, bigint, bigint), forum.read_positions_of(text[]),
      forum.read_position(text), forum.my_read_positions(), forum.mark_read(text[], bigint[]),
      forum.revisions_of(text, text, bigint, bigint), forum.revision_totals(text, text),
      forum.array_changed(text, jsonb, jsonb) TO forum_member;
    """

  /// Row-level security, grants and the owner's reach, rebuilt on every `forum init`.
  static var policiesSQL: String {
    var sql = """
      DO $$ BEGIN
        EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO forum_member', current_database());
      END $$;
      GRANT USAGE ON SCHEMA forum TO forum_member;
      REVOKE ALL ON ALL TABLES IN SCHEMA forum FROM PUBLIC, forum_member;
      -- No table-wide INSERT, UPDATE, DELETE or TRUNCATE: any of them lets a member
      -- `LOCK TABLE … IN ACCESS EXCLUSIVE MODE` and stop every reader. Column grants do not;
      -- deletes go through forum.delete_object / forum.delete_file.
      GRANT SELECT ON forum.objects TO forum_member;
      GRANT INSERT (class, object_id, readers, writers, data) ON forum.objects TO forum_member;
      GRANT UPDATE (readers, writers, data) ON forum.objects TO forum_member;
      GRANT SELECT ON forum.files TO forum_member;
      GRANT INSERT (name, mime_type, readers, writers, data) ON forum.files TO forum_member;
      GRANT UPDATE (readers, writers) ON forum.files TO forum_member;
      GRANT SELECT ON forum.meta TO forum_member;
      -- Read positions are private to each user: no grant at all (a leakproof probe on
      -- user_id and object_id told whose existed); forum.read_positions_of / forum.mark_read.
      -- Revisions neither: forum.revisions_of finds the object before its revisions.
      GRANT SELECT ON forum.changes TO forum_member;
      REVOKE ALL ON SEQUENCE forum.change_seq FROM PUBLIC, forum_member;

      """
    for table in tables {
      sql += """
        ALTER TABLE forum.\(table) ENABLE ROW LEVEL SECURITY;
        ALTER TABLE forum.\(table) FORCE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS owner_all ON forum.\(table);
        CREATE POLICY owner_all ON forum.\(table) TO CURRENT_USER USING (true) WITH CHECK (true);

        """
    }
    // `'*' = ANY(readers)` first: the planner estimates it from the column's statistics (most
    // rows of a board are public), where `readers && (SELECT …)` alone would be guessed at 0.5%
    // and send every listing through the GIN index and a sort instead of its ordered index.
    let readable = "('*' = ANY(readers) OR readers && (SELECT forum.principals()))"
    let writable = "writers && (SELECT forum.principals())"
    sql += """
      DROP POLICY IF EXISTS member_read ON forum.meta;
      CREATE POLICY member_read ON forum.meta FOR SELECT TO forum_member USING (true);

      DROP POLICY IF EXISTS member_read ON forum.objects;
      CREATE POLICY member_read ON forum.objects FOR SELECT TO forum_member USING (\(readable));
      DROP POLICY IF EXISTS member_insert ON forum.objects;
      CREATE POLICY member_insert ON forum.objects FOR INSERT TO forum_member
        WITH CHECK (class <> 'user');
      DROP POLICY IF EXISTS member_update ON forum.objects;
      CREATE POLICY member_update ON forum.objects FOR UPDATE TO forum_member
        USING (\(writable)) WITH CHECK (true);
      DROP POLICY IF EXISTS member_delete ON forum.objects;
      CREATE POLICY member_delete ON forum.objects FOR DELETE TO forum_member
        USING (\(writable) AND class <> 'user');

      DROP POLICY IF EXISTS member_read ON forum.changes;
      CREATE POLICY member_read ON forum.changes FOR SELECT TO forum_member USING (\(readable));

      DROP POLICY IF EXISTS member_read ON forum.files;
      CREATE POLICY member_read ON forum.files FOR SELECT TO forum_member USING (\(readable));
      DROP POLICY IF EXISTS member_insert ON forum.files;
      CREATE POLICY member_insert ON forum.files FOR INSERT TO forum_member WITH CHECK (true);
      DROP POLICY IF EXISTS member_delete ON forum.files;
      CREATE POLICY member_delete ON forum.files FOR DELETE TO forum_member USING (\(writable));
      DROP POLICY IF EXISTS member_update ON forum.files;
      CREATE POLICY member_update ON forum.files FOR UPDATE TO forum_member
        USING (\(writable)) WITH CHECK (true);

      DROP POLICY IF EXISTS member_own ON forum.read_positions;
      DROP POLICY IF EXISTS member_read ON forum.revisions;

      """
    return sql
  }
}

/// PostgreSQL's schema as the SQL core migrates it: `forum.meta`'s `schema_version`.
extension PostgresConnection: MigratedDatabase {
  func schemaVersion() throws -> Int {
    guard try query("SELECT to_regclass('forum.meta') IS NOT NULL").bool(0, 0) else { return 0 }
    let recorded = try query(
      "SELECT coalesce((SELECT value FROM forum.meta WHERE key = 'schema_version'), '0')")
    return Int(recorded.text(0, 0) ?? "0") ?? 0
  }

  func runStep(_ sql: String) throws { try execute(sql) }

  func recordSchemaVersion(_ count: Int) throws {}
}
