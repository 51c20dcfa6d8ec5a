/// Full-text search on PostgreSQL, as `forum init` installs it for the classes declared by
/// `IndexSpec(textOf:fields:)`: `forum.search_text`, one row per object of those classes with its
/// folded text, kept by a trigger in the writer's transaction, with a pg_trgm GIN index; and
/// `forum.search_candidates(class, pattern)`, which walks that index.
///
/// Why a table of its own: under row-level security only leakproof operators may reach an index,
/// and LIKE is not leakproof, so a LIKE on `forum.objects` reads every row of the class, even in
/// the owner's functions (the policies are forced). `search_text` has no policies and no grants:
/// members cannot read it at all. The function runs as the owner and returns only the ids of rows
/// the caller may read (`forum.principals()` is the session user's, as in the policies); the
/// member's query then joins them under its own row-level security and checks every term on the
/// row. Class and field names are `Validation.isName` names, safe inside SQL text.
///
/// The function never matches a pattern against text the caller may not read (issue 22: the
/// buffers a trigram lookup touched, as `EXPLAIN (ANALYZE, BUFFERS)` counts them, told a third
/// person which words others' direct messages held). The trigram index holds public rows only
/// (`public`, kept with the row's readers); the caller's private rows are found by the caller's
/// own principals first, and only their text is matched.
enum PostgresSearch {
  /// `text` with ASCII letters in lower case, as search compares it (whatever the collation).
  static func folded(_ text: String) -> String {
    "translate(\(text), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
  }

  /// The folded text of an object's text fields joined by newlines (`row`: a table alias or
  /// nothing): what the index is built on and the function looks in, the same expression so the
  /// planner matches them.
  static func body(_ fields: [String], row: String = "") -> String {
    let prefix = row.isEmpty ? "" : row + "."
    return folded(
      fields.map { "coalesce(\(prefix)data->>'\($0)', '')" }.joined(separator: " || E'\\n' || "))
  }

  static let candidatesFunction = "forum.search_candidates"
  static let privateCandidatesFunction = "forum.private_search_candidates"

  /// What `forum.meta`'s `search` records: the indexed classes and their fields.
  /// The fields `record` wrote.
  static func fields(fromRecord record: String?) -> [String: [String]] {
    var fields: [String: [String]] = [:]
    for entry in (record ?? "").split(separator: ";") {
      let parts = entry.split(separator: ":", maxSplits: 1)
      guard parts.count == 2 else { continue }
      fields[String(parts[0])] = parts[1].split(separator: ",").map(String.init)
    }
    return fields
  }

  static func record(_ fields: [String: [String]]) -> String {
    fields.keys.sorted().map { "\($0):\(fields[$0]!.joined(separator: ","))" }.joined(
      separator: ";")
  }

  /// Installs the extension (trusted: a database owner may), the table, its trigger for `fields`
  /// and the function, and indexes what is missing or stale, idempotently, inside `forum init`'s
  /// transaction.
  static func install(
    _ fields: [String: [String]], privateClasses: Set<String> = [],
    on connection: PostgresConnection
  ) throws {
    guard !fields.isEmpty else { return }
    try connection.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA forum")
    let schema =
      try connection.query(
        "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
      ).text(0, 0) ?? "forum"
    let classes = fields.keys.sorted()
    let privateList =
      privateClasses.isEmpty
      ? "''" : privateClasses.sorted().map { "'\($0)'" }.joined(separator: ", ")
    let cases = classes.map { "WHEN '\($0)' THEN \(body(fields[$0]!, row: "NEW"))" }
    try connection.execute(
      """
      CREATE TABLE IF NOT EXISTS forum.search_text(
        id bigint PRIMARY KEY REFERENCES forum.objects(id) ON DELETE CASCADE,
        class text NOT NULL,
        body text NOT NULL
      );
      REVOKE ALL ON forum.search_text FROM PUBLIC, forum_member;
      ALTER TABLE forum.search_text ADD COLUMN IF NOT EXISTS public boolean NOT NULL DEFAULT false;
      -- Only public text: any plan over this table and its index reads nothing private.
      DELETE FROM forum.search_text s USING forum.objects o
        WHERE o.id = s.id AND NOT ('*' = ANY(o.readers));
      DELETE FROM forum.search_text WHERE NOT public;
      -- The index of older boards held every row, private ones too.
      DROP INDEX IF EXISTS forum.search_text_body;
      CREATE INDEX IF NOT EXISTS search_text_public_body ON forum.search_text
        USING gin (body \(schema).gin_trgm_ops) WHERE public;
      CREATE OR REPLACE FUNCTION forum.search_text_keep() RETURNS trigger
      LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
      AS $$
      DECLARE
        text_body text := CASE NEW.class \(cases.joined(separator: " ")) END;
      BEGIN
        IF text_body IS NULL THEN RETURN NULL; END IF;
        IF TG_TABLE_NAME = 'private_objects' THEN
          INSERT INTO forum.private_search_text(id, class, body)
          VALUES (NEW.id, NEW.class, text_body)
          ON CONFLICT (id) DO UPDATE SET body = excluded.body
            WHERE forum.private_search_text.body IS DISTINCT FROM excluded.body;
          RETURN NULL;
        END IF;
        -- forum.objects holds public rows only; were one not, its text stays out of the index.
        IF NOT ('*' = ANY(NEW.readers)) THEN
          DELETE FROM forum.search_text WHERE id = NEW.id;
          RETURN NULL;
        END IF;
        INSERT INTO forum.search_text(id, class, body, public)
        VALUES (NEW.id, NEW.class, text_body, true)
        ON CONFLICT (id) DO UPDATE SET body = excluded.body, public = excluded.public
          WHERE forum.search_text.body IS DISTINCT FROM excluded.body
            OR forum.search_text.public IS DISTINCT FROM excluded.public;
        RETURN NULL;
      END
      $$;
      REVOKE ALL ON FUNCTION forum.search_text_keep() FROM PUBLIC;
      DROP TRIGGER IF EXISTS e_search ON forum.objects;
      CREATE TRIGGER e_search AFTER INSERT OR UPDATE OF data, readers ON forum.objects
        FOR EACH ROW WHEN (NEW.class IN (\(classes.map { "'\($0)'" }.joined(separator: ", "))))
        EXECUTE FUNCTION forum.search_text_keep();
      DROP TRIGGER IF EXISTS e_search ON forum.private_objects;
      CREATE TRIGGER e_search AFTER INSERT OR UPDATE OF data, readers ON forum.private_objects
        FOR EACH ROW WHEN (NEW.class IN (\(classes.map { "'\($0)'" }.joined(separator: ", "))))
        EXECUTE FUNCTION forum.search_text_keep();
      CREATE OR REPLACE FUNCTION \(candidatesFunction)(class_name text, pattern text)
      RETURNS SETOF bigint
      LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
      -- Planned at every call with its pattern, as a SQL function is: a cached generic plan
      -- would make the first calls cost more than the later ones.
      SET plan_cache_mode = force_custom_plan
      AS $$
      BEGIN
        IF class_name IN (\(privateList)) THEN
          RETURN QUERY SELECT * FROM \(privateCandidatesFunction)(class_name, pattern);
          RETURN;
        END IF;
        -- Public rows through the index of public rows (forum.objects holds no other).
        RETURN QUERY SELECT s.id FROM forum.search_text s
          WHERE s.public AND s.class = class_name AND s.body LIKE pattern;
      END
      $$;
      -- The ids (of forum.private_objects) of the caller's private rows of a class whose text
      -- matches (issue 28). By construction, whatever plan the planner picks: the caller's own
      -- ids first (`forum.private_rows`, which looks up keys made of the caller's principals),
      -- then the text of exactly those rows by primary key, a statement that never sees the
      -- pattern; the pattern is matched here, in PL/pgSQL, on those texts only. No statement
      -- holds both the pattern and a table (a join of the two was turned around by the planner
      -- under `enable_hashjoin = off` and matched everyone's text first). The index settings
      -- are pinned, so a member's session cannot make the lookup walk others' pages either.
      CREATE OR REPLACE FUNCTION \(privateCandidatesFunction)(class_name text, pattern text)
      RETURNS SETOF bigint
      LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
      SET enable_seqscan = off SET enable_indexscan = on SET enable_bitmapscan = on
      AS $$
      DECLARE
        mine bigint[] := ARRAY(SELECT p.id FROM forum.private_rows(class_name, NULL, NULL) p);
        found_id bigint;
        found_body text;
      BEGIN
        IF cardinality(mine) = 0 THEN RETURN; END IF;
        FOR found_id, found_body IN
          SELECT s.id, s.body FROM forum.private_search_text s WHERE s.id = ANY(mine)
        LOOP
          IF found_body LIKE pattern THEN RETURN NEXT found_id; END IF;
        END LOOP;
      END
      $$;
      REVOKE ALL ON FUNCTION \(privateCandidatesFunction)(text, text) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION \(privateCandidatesFunction)(text, text) TO forum_member;
      REVOKE ALL ON FUNCTION \(candidatesFunction)(text, text) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION \(candidatesFunction)(text, text) TO forum_member;
      INSERT INTO forum.meta(key, value) VALUES ('search', '\(record(fields))')
      ON CONFLICT (key) DO UPDATE SET value = excluded.value;
      DELETE FROM forum.search_text
        WHERE class NOT IN (\(classes.map { "'\($0)'" }.joined(separator: ", ")));
      DELETE FROM forum.private_search_text
        WHERE class NOT IN (\(classes.map { "'\($0)'" }.joined(separator: ", ")));
      """)
    for className in classes {
      try connection.execute(
        """
        INSERT INTO forum.search_text(id, class, body, public)
        SELECT o.id, o.class, \(body(fields[className]!, row: "o")), '*' = ANY(o.readers)
        FROM forum.objects o WHERE o.class = '\(className)' AND '*' = ANY(o.readers)
        ON CONFLICT (id) DO UPDATE SET body = excluded.body, public = excluded.public
          WHERE forum.search_text.body IS DISTINCT FROM excluded.body
            OR forum.search_text.public IS DISTINCT FROM excluded.public;
        INSERT INTO forum.private_search_text(id, class, body)
        SELECT o.id, o.class, \(body(fields[className]!, row: "o"))
        FROM forum.private_objects o WHERE o.class = '\(className)'
        ON CONFLICT (id) DO UPDATE SET body = excluded.body
          WHERE forum.private_search_text.body IS DISTINCT FROM excluded.body
        """)
    }
  }
}
