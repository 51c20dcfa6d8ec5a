/// Files some members may not read (issue 22): a file whose readers lack '*' lives in the
/// owner-only `forum.private_files` (schema step 11), because a row of `forum.files` is found by
/// its name, a leakproof key, before row-level security hides it, so a member's `EXPLAIN
/// ANALYZE … WHERE name = 'x'` told whether a private file of that name existed. Members reach
/// their own private files through `forum.private_file_rows`, whose lookup keys (`f/<reader>/
/// <name>`) are made of the caller's own principals, and write them through
/// `forum.insert_file` / `forum.update_file` / `forum.delete_file`; an `INSERT INTO forum.files`
/// of a private file is routed there, and a file whose readers gain or lose '*' changes tables.
extension PostgresSchema {
  /// A private file's lookup keys: `f/<reader>/<name>` finds it by name (a GET), and
  /// `fa/<reader>` among all of that reader's files (NCMB's file search, `GET /files`).
  static let fileKeysSQL = """
    CREATE OR REPLACE FUNCTION forum.file_keys(file_name text, file_readers text[])
    RETURNS text[]
    LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT coalesce(array_agg(k), '{}'::text[])
      FROM unnest(file_readers) r, LATERAL (VALUES ('f/' || r || '/' || file_name), ('fa/' || r)) v(k)
    $$;
    """

  static let filesSQL = """
    \(fileKeysSQL)

    -- Every private file the caller may read (NCMB's file search), found by the caller's own
    -- keys; the schema's owner gets every one.
    CREATE OR REPLACE FUNCTION forum.private_file_list()
    RETURNS SETOF forum.private_files
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_indexscan = on
    SET enable_bitmapscan = on
    SET plan_cache_mode = force_custom_plan
    AS $$
    BEGIN
      IF forum.is_trusted() THEN
        RETURN QUERY SELECT f.* FROM forum.private_files f;
        RETURN;
      END IF;
      RETURN QUERY SELECT f.* FROM forum.private_files f
        WHERE f.reader_keys && ARRAY(SELECT 'fa/' || p FROM unnest(forum.principals()) p);
    END
    $$;

    -- The caller's own private files among some names; the schema's owner gets every one.
    CREATE OR REPLACE FUNCTION forum.private_file_rows(names text[])
    RETURNS SETOF forum.private_files
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 1
    SET search_path = pg_catalog, pg_temp SET enable_seqscan = off SET enable_indexscan = on
    SET enable_bitmapscan = on
    SET plan_cache_mode = force_custom_plan
    AS $$
    DECLARE
      keys text[];
    BEGIN
      IF forum.is_trusted() THEN
        RETURN QUERY SELECT f.* FROM forum.private_files f WHERE f.name = ANY(names);
        RETURN;
      END IF;
      keys := ARRAY(SELECT 'f/' || p || '/' || n FROM unnest(forum.principals()) p,
                    unnest(names) n);
      RETURN QUERY SELECT f.* FROM forum.private_files f WHERE f.reader_keys && keys;
    END
    $$;

    -- Dates and size from the server, keys from the readers; a file changing tables keeps its
    -- dates (`forum.is_moving`).
    CREATE OR REPLACE FUNCTION forum.private_files_keep() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF TG_OP = 'INSERT' AND NOT forum.is_moving() THEN
        NEW.create_date := forum.now_ms();
        NEW.update_date := NEW.create_date;
        NEW.file_size := octet_length(NEW.data);
      ELSIF TG_OP = 'UPDATE' AND NOT forum.is_moving() THEN
        NEW.update_date := greatest(forum.now_ms(), OLD.update_date + 1);
      END IF;
      NEW.reader_keys := forum.file_keys(NEW.name, NEW.readers);
      RETURN NEW;
    END
    $$;
    DROP TRIGGER IF EXISTS b_keep ON forum.private_files;
    CREATE TRIGGER b_keep BEFORE INSERT OR UPDATE ON forum.private_files
      FOR EACH ROW EXECUTE FUNCTION forum.private_files_keep();

    -- A file whose readers gain or lose '*' goes to the other table, as it is now (the date
    -- trigger has moved its date); the UPDATE itself writes nothing.
    CREATE OR REPLACE FUNCTION forum.files_move() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      was text := coalesce(current_setting('forum.moving', true), '');
    BEGIN
      PERFORM set_config('forum.moving',
        (SELECT value FROM forum.secrets WHERE name = 'move_key'), true);
      IF TG_TABLE_NAME = 'files' THEN
        DELETE FROM forum.files WHERE name = OLD.name;
        INSERT INTO forum.private_files(name, mime_type, file_size, create_date, update_date,
                                        readers, writers, data, creator)
        VALUES (NEW.name, NEW.mime_type, NEW.file_size, NEW.create_date, NEW.update_date,
                NEW.readers, NEW.writers, NEW.data, NEW.creator);
      ELSE
        DELETE FROM forum.private_files WHERE name = OLD.name;
        INSERT INTO forum.files(name, mime_type, file_size, create_date, update_date, readers,
                                writers, data, creator)
        VALUES (NEW.name, NEW.mime_type, NEW.file_size, NEW.create_date, NEW.update_date,
                NEW.readers, NEW.writers, NEW.data, NEW.creator);
      END IF;
      PERFORM set_config('forum.moving', was, true);
      RETURN NULL;
    END
    $$;
    DROP TRIGGER IF EXISTS y_move ON forum.files;
    CREATE TRIGGER y_move BEFORE UPDATE OF readers ON forum.files
      FOR EACH ROW WHEN (NOT ('*' = ANY(NEW.readers))) EXECUTE FUNCTION forum.files_move();
    DROP TRIGGER IF EXISTS y_move ON forum.private_files;
    CREATE TRIGGER y_move BEFORE UPDATE OF readers ON forum.private_files
      FOR EACH ROW WHEN ('*' = ANY(NEW.readers)) EXECUTE FUNCTION forum.files_move();

    -- A new private file; names are unique across both tables.
    CREATE OR REPLACE FUNCTION forum.insert_file(file_name text, file_type text,
      new_readers text[], new_writers text[], bytes bytea)
    RETURNS TABLE(name text, mime_type text, file_size bigint, create_date bigint,
                  update_date bigint, readers text[], writers text[])
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF '*' = ANY(new_readers) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = 'acl';
      END IF;
      IF EXISTS (SELECT 1 FROM forum.files f WHERE f.name = file_name) THEN
        RAISE EXCEPTION USING ERRCODE = '23505', MESSAGE = 'fileName already exists',
          TABLE = 'files';
      END IF;
      INSERT INTO forum.private_files(name, mime_type, file_size, create_date, update_date,
                                      readers, writers, data)
      VALUES (file_name, file_type, 0, 0, 0, new_readers, new_writers, bytes);
      RETURN QUERY SELECT f.name, f.mime_type, f.file_size, f.create_date, f.update_date,
          f.readers, f.writers
        FROM forum.private_files f
        WHERE f.name = file_name AND (forum.is_trusted() OR f.readers && forum.principals());
    END
    $$;

    CREATE OR REPLACE FUNCTION forum.files_route() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF forum.is_moving() THEN RETURN NEW; END IF;
      IF NOT ('*' = ANY(NEW.readers)) THEN
        PERFORM 1 FROM forum.insert_file(NEW.name, NEW.mime_type, NEW.readers, NEW.writers,
                                         NEW.data);
        RETURN NULL;
      END IF;
      IF EXISTS (SELECT 1 FROM forum.private_files f WHERE f.name = NEW.name) THEN
        RAISE EXCEPTION USING ERRCODE = '23505', MESSAGE = 'fileName already exists',
          TABLE = 'files';
      END IF;
      RETURN NEW;
    END
    $$;
    DROP TRIGGER IF EXISTS a0_route ON forum.files;
    CREATE TRIGGER a0_route BEFORE INSERT ON forum.files
      FOR EACH ROW EXECUTE FUNCTION forum.files_route();

    -- A file's new ACL (NCMB's PUT /files/NAME), wherever it is: the caller must be able to
    -- read it (else it is not found) and write it. True when it changed.
    CREATE OR REPLACE FUNCTION forum.update_file(file_name text, new_readers text[],
      new_writers text[], narrowing text[])
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      trusted boolean := forum.is_trusted();
      found_readers text[];
      found_writers text[];
      in_private boolean := false;
    BEGIN
      SELECT f.readers, f.writers INTO found_readers, found_writers FROM forum.files f
      WHERE f.name = file_name FOR UPDATE;
      IF NOT FOUND THEN
        SELECT p.readers, p.writers INTO found_readers, found_writers
        FROM forum.private_file_rows(ARRAY[file_name]) p WHERE p.name = file_name;
        IF NOT FOUND THEN RETURN false; END IF;
        PERFORM 1 FROM forum.private_files f WHERE f.name = file_name FOR UPDATE;
        in_private := true;
      END IF;
      IF NOT (trusted OR found_readers && forum.principals())
         OR NOT (narrowing IS NULL OR found_readers && narrowing) THEN
        RETURN false;
      END IF;
      IF NOT (trusted OR found_writers && forum.principals())
         OR NOT (narrowing IS NULL OR found_writers && narrowing) THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'No access with ACL.';
      END IF;
      IF in_private THEN
        UPDATE forum.private_files SET readers = new_readers, writers = new_writers
        WHERE name = file_name;
      ELSE
        UPDATE forum.files SET readers = new_readers, writers = new_writers
        WHERE name = file_name;
      END IF;
      RETURN true;
    END
    $$;

    CREATE OR REPLACE FUNCTION forum.delete_file(target text, narrowing text[]) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      trusted boolean := forum.is_trusted();
    BEGIN
      DELETE FROM forum.files
      WHERE name = target AND (trusted OR writers && forum.principals())
        AND (narrowing IS NULL OR writers && narrowing);
      IF FOUND THEN RETURN true; END IF;
      IF NOT EXISTS (SELECT 1 FROM forum.private_file_rows(ARRAY[target]) p
                     WHERE p.name = target) THEN
        RETURN false;
      END IF;
      DELETE FROM forum.private_files
      WHERE name = target AND (trusted OR writers && forum.principals())
        AND (narrowing IS NULL OR writers && narrowing);
      RETURN FOUND;
    END
    $$;

    REVOKE ALL ON FUNCTION forum.file_keys(text, text[]), forum.private_file_rows(text[]),
      forum.private_file_list(),
      forum.private_files_keep(), forum.files_move(), forum.files_route(),
      forum.insert_file(text, text, text[], text[], bytea),
      forum.update_file(text, text[], text[], text[]), forum.delete_file(text, text[])
      FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.private_file_rows(text[]), forum.private_file_list(),
      forum.delete_file(text, text[]),
      forum.insert_file(text, text, text[], text[], bytea),
      forum.update_file(text, text[], text[], text[]) TO forum_member;
    """

  /// Moves files that belong in the other table (a board made before step 11), as they are.
  static func movePrivateFiles(on connection: PostgresConnection) throws {
    let pending = try connection.query(
      """
      SELECT EXISTS (SELECT 1 FROM forum.files WHERE NOT ('*' = ANY(readers)))
        OR EXISTS (SELECT 1 FROM forum.private_files WHERE '*' = ANY(readers))
      """)
    guard pending.bool(0, 0) else { return }
    try connection.execute(
      """
      ALTER TABLE forum.files DISABLE TRIGGER USER;
      ALTER TABLE forum.private_files DISABLE TRIGGER USER;
      WITH moved AS (
        DELETE FROM forum.files WHERE NOT ('*' = ANY(readers))
        RETURNING name, mime_type, file_size, create_date, update_date, readers, writers, data,
          creator
      )
      INSERT INTO forum.private_files(name, mime_type, file_size, create_date, update_date,
                                      readers, writers, data, creator, reader_keys)
      SELECT m.*, forum.file_keys(m.name, m.readers) FROM moved m;
      WITH moved AS (
        DELETE FROM forum.private_files WHERE '*' = ANY(readers)
        RETURNING name, mime_type, file_size, create_date, update_date, readers, writers, data,
          creator
      )
      INSERT INTO forum.files(name, mime_type, file_size, create_date, update_date, readers,
                              writers, data, creator)
      SELECT * FROM moved;
      ALTER TABLE forum.files ENABLE TRIGGER USER;
      ALTER TABLE forum.private_files ENABLE TRIGGER USER;
      """)
  }
}
