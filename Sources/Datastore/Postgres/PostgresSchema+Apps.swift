/// `forum serve` on PostgreSQL (issue 18): one server role acts for many anonymous app users,
/// and row-level security still decides what each of them sees.
///
/// - The server connects as a role granted `forum_member` and `forum_server`. It has no user of
///   its own: `forum.caller_id()` and `forum.principals()` return the app user it acts for, or
///   nobody (`*` only).
/// - `forum.app_sign_in` finds or makes the user of an anonymous id and starts a session;
///   `forum.act_as(token_hash)` makes the connection that user while the session lives (it sets
///   `forum.acting`, which counts only for a server role and only for a live session). Both refuse
///   any role that is not a server, so a member with psql cannot act as anyone, whatever token
///   or setting they hold.
/// - The tables behind them (`secrets`, `app_identities`, `app_sessions`, `app_passwords`) are
///   owner-only: only SHA-256 hashes of ids and tokens and Argon2id hashes of passwords are
///   stored, and no member reads the keys.
extension PostgresSchema {
  /// The group role whose members may act for app users.
  static let serverRole = "forum_server"

  /// `forum_server` is shared by the cluster, like `forum_member`. An owner who may not create
  /// roles still gets a board; serving it then waits for a superuser to make the role.
  static func createServerRole(on connection: PostgresConnection) throws {
    try connection.execute(
      """
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'forum_server') THEN
          CREATE ROLE forum_server NOLOGIN;
        END IF;
      EXCEPTION WHEN duplicate_object OR unique_violation OR insufficient_privilege THEN NULL;
      END $$
      """)
  }

  static let appFunctionsSQL = """
    CREATE OR REPLACE FUNCTION forum.refuse_non_server() RETURNS void
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      IF NOT forum.is_server() THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403',
          MESSAGE = format('role %s is not a server (forum_server): it acts only as itself',
                           session_user);
      END IF;
    END
    $$;

    -- The user of an anonymous id (by its hash), made on first use, and a new session for it.
    CREATE OR REPLACE FUNCTION forum.app_sign_in(secret bytea, token bytea, lifetime_ms bigint)
    RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      found_id text;
      now_ms bigint := forum.now_ms();
    BEGIN
      PERFORM forum.refuse_non_server();
      SELECT user_id INTO found_id FROM forum.app_identities WHERE secret_hash = secret;
      IF found_id IS NULL THEN
        found_id := forum.random_id(16);
        INSERT INTO forum.app_identities(secret_hash, user_id) VALUES (secret, found_id)
        ON CONFLICT (secret_hash) DO NOTHING;
        IF FOUND THEN
          INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers,
                                    data)
          VALUES ('user', found_id, now_ms, now_ms, ARRAY['*'], ARRAY[found_id],
                  jsonb_build_object('userName', forum.random_id(10)));
        ELSE
          SELECT user_id INTO found_id FROM forum.app_identities WHERE secret_hash = secret;
        END IF;
      END IF;
      INSERT INTO forum.app_sessions(token_hash, user_id, expires_at)
      VALUES (token, found_id, now_ms + lifetime_ms);
      RETURN found_id;
    END
    $$;

    -- Makes this connection the user of a live session (NULL: nobody) until the next call; the
    -- user, or NULL when the session is unknown or over. A server only.
    CREATE OR REPLACE FUNCTION forum.act_as(token bytea) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      found_id text;
    BEGIN
      PERFORM forum.refuse_non_server();
      IF token IS NOT NULL THEN
        SELECT user_id INTO found_id FROM forum.app_sessions
        WHERE token_hash = token AND expires_at > forum.now_ms();
      END IF;
      PERFORM set_config('forum.acting',
                         CASE WHEN found_id IS NULL THEN '' ELSE encode(token, 'hex') END, false);
      -- The user's roles follow its id, space-separated (an imported app's roles, issue 34).
      RETURN found_id || coalesce((SELECT ' ' || string_agg(m.role, ' ' ORDER BY m.role)
                                   FROM forum.app_role_members m WHERE m.user_id = found_id), '');
    END
    $$;

    -- Ends every session of an app user (logout): a server only.
    CREATE OR REPLACE FUNCTION forum.end_app_sessions(target text) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      PERFORM forum.refuse_non_server();
      DELETE FROM forum.app_sessions WHERE user_id = target;
    END
    $$;

    -- Password accounts (schema step 19). A new app user named `user_name` with its password's
    -- hash under `name_key` (the name in lower case) and a new session: NULL when the name is
    -- someone's already, a password account's or any user's, in any case.
    CREATE OR REPLACE FUNCTION forum.app_sign_up(user_name text, name_key text,
                                                 password_hash text, token bytea,
                                                 lifetime_ms bigint)
    RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      new_id text := forum.random_id(16);
      now_ms bigint := forum.now_ms();
    BEGIN
      PERFORM forum.refuse_non_server();
      IF EXISTS (SELECT 1 FROM forum.objects
                 WHERE class = 'user' AND lower(data->>'userName') = lower(user_name)) THEN
        RETURN NULL;
      END IF;
      INSERT INTO forum.app_passwords(name_key, user_id, password_hash)
      VALUES (name_key, new_id, password_hash) ON CONFLICT ON CONSTRAINT app_passwords_pkey
      DO NOTHING;
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      INSERT INTO forum.objects(class, object_id, create_date, update_date, readers, writers, data)
      VALUES ('user', new_id, now_ms, now_ms, ARRAY['*'], ARRAY[new_id],
              jsonb_build_object('userName', user_name));
      INSERT INTO forum.app_sessions(token_hash, user_id, expires_at)
      VALUES (token, new_id, now_ms + lifetime_ms);
      RETURN new_id;
    END
    $$;

    -- The user and hash of a password account, for the server to check a password against.
    CREATE OR REPLACE FUNCTION forum.app_password_of(key text)
    RETURNS TABLE(account text, hash text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      PERFORM forum.refuse_non_server();
      RETURN QUERY SELECT p.user_id, p.password_hash FROM forum.app_passwords p
        WHERE p.name_key = key;
    END
    $$;

    -- A new session for a password account whose hash is still the one the server checked.
    CREATE OR REPLACE FUNCTION forum.app_password_session(target text, checked text, token bytea,
                                                          lifetime_ms bigint)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      PERFORM forum.refuse_non_server();
      PERFORM 1 FROM forum.app_passwords p WHERE p.user_id = target AND p.password_hash = checked
        FOR UPDATE;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      INSERT INTO forum.app_sessions(token_hash, user_id, expires_at)
      VALUES (token, target, forum.now_ms() + lifetime_ms);
      RETURN true;
    END
    $$;

    -- The acting app user's new password hash (an anonymous user takes a password account
    -- under its name); its other sessions end, the one hashing to `keeping` goes on. False when
    -- its name is a password account's already.
    CREATE OR REPLACE FUNCTION forum.app_set_password(new_hash text, keeping bytea)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      target text := forum.acting_user();
    BEGIN
      PERFORM forum.refuse_non_server();
      IF target IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FA401', MESSAGE = 'no session';
      END IF;
      UPDATE forum.app_passwords p SET password_hash = new_hash WHERE p.user_id = target;
      IF NOT FOUND THEN
        INSERT INTO forum.app_passwords(name_key, user_id, password_hash)
        SELECT lower(o.data->>'userName'), target, new_hash FROM forum.objects o
        WHERE o.object_id = target AND o.class = 'user'
        ON CONFLICT ON CONSTRAINT app_passwords_pkey DO NOTHING;
        IF NOT FOUND THEN
          RETURN false;
        END IF;
      END IF;
      DELETE FROM forum.app_sessions s
      WHERE s.user_id = target AND s.token_hash IS DISTINCT FROM keeping;
      RETURN true;
    END
    $$;

    -- The board's NCMB keys: read by the owner and servers, made on first use (`make`), replaced
    -- by the owner alone (`rotate`). Made here from the server's random source, so they never
    -- travel as parameters.
    CREATE OR REPLACE FUNCTION forum.application_keys(make boolean, rotate boolean)
    RETURNS TABLE(application_key text, client_key text)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    DECLARE
      owner boolean := forum.is_board_owner();
    BEGIN
      IF NOT owner AND NOT forum.is_server() THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403',
          MESSAGE = 'only the board''s owner (or its server role) reads the application keys';
      END IF;
      IF rotate AND NOT owner THEN
        RAISE EXCEPTION USING ERRCODE = 'FA403',
          MESSAGE = 'only the board''s owner rotates the application keys';
      END IF;
      IF rotate OR (make AND NOT EXISTS (SELECT 1 FROM forum.secrets
                                         WHERE name = 'ncmbApplicationKey')) THEN
        -- Held to the commit, so two servers starting at once make one pair.
        PERFORM 1 FROM forum.feed_lock WHERE id = 1 FOR UPDATE;
        IF rotate OR NOT EXISTS (SELECT 1 FROM forum.secrets
                                 WHERE name = 'ncmbApplicationKey') THEN
          INSERT INTO forum.secrets(name, value)
          SELECT n, encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text
                                             || gen_random_uuid()::text, 'UTF8')), 'hex')
          FROM unnest(ARRAY['ncmbApplicationKey', 'ncmbClientKey']) AS n
          ON CONFLICT (name) DO UPDATE SET value = excluded.value;
        END IF;
      END IF;
      RETURN QUERY
        SELECT a.value, c.value FROM forum.secrets a, forum.secrets c
        WHERE a.name = 'ncmbApplicationKey' AND c.name = 'ncmbClientKey';
    END
    $$;

    -- A file's ACL may change (NCMB's PUT /files/NAME): its date moves by the engine's clock.
    CREATE OR REPLACE FUNCTION forum.files_before_update() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      NEW.update_date := greatest(forum.now_ms(), OLD.update_date + 1);
      RETURN NEW;
    END
    $$;
    REVOKE ALL ON FUNCTION forum.files_before_update() FROM PUBLIC;
    DROP TRIGGER IF EXISTS b_date ON forum.files;
    CREATE TRIGGER b_date BEFORE UPDATE ON forum.files
      FOR EACH ROW EXECUTE FUNCTION forum.files_before_update();

    REVOKE ALL ON FUNCTION forum.refuse_non_server(), forum.app_sign_in(bytea, bytea, bigint),
      forum.act_as(bytea), forum.end_app_sessions(text), forum.application_keys(boolean, boolean),
      forum.app_sign_up(text, text, text, bytea, bigint), forum.app_password_of(text),
      forum.app_password_session(text, text, bytea, bigint), forum.app_set_password(text, bytea)
      FROM PUBLIC;
    GRANT EXECUTE ON FUNCTION forum.refuse_non_server(), forum.app_sign_in(bytea, bytea, bigint),
      forum.act_as(bytea), forum.end_app_sessions(text), forum.application_keys(boolean, boolean),
      forum.app_sign_up(text, text, text, bytea, bigint), forum.app_password_of(text),
      forum.app_password_session(text, text, bytea, bigint), forum.app_set_password(text, bytea)
      TO forum_member;
    """
}
