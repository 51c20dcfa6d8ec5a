import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Key columns and indexes were named by their fields lowercased, `_` for dots: `Note` and
/// `note`, `a.b` and `a_b` met in one column (a query on the second sought the first's values)
/// and one index name (the second was never made). `forum init` on such a board renames what
/// it has to its fields' own names (`keyColumnNamesStep`, then each index found holding its
/// spec's columns) and builds nothing twice; the second field of each pair then gets its own.
@Suite("PostgreSQL: key columns named by their fields")
struct PostgresKeyColumnNamesTests {
  static let first = [
    IndexSpec(className: "Memo", fields: ["Note"]), IndexSpec(className: "Memo", fields: ["a.b"]),
    IndexSpec(className: "Thread", fields: ["lastActivity"]),
  ]
  static let second = [
    IndexSpec(className: "Memo", fields: ["note"]), IndexSpec(className: "Memo", fields: ["a_b"]),
  ]

  /// The names the last version gave: lower case, every separator `_`, cut at 63.
  static let backToLegacyNames = #"""
    DO $$ DECLARE c record; i record; BEGIN
      FOR c IN SELECT attrelid::regclass AS home, attname::text AS name FROM pg_attribute
        WHERE attrelid IN ('forum.objects'::regclass, 'forum.private_objects'::regclass)
          AND attname LIKE 'key\_%' AND NOT attisdropped LOOP
        IF lower(replace(c.name, '.', '_')) <> c.name THEN
          EXECUTE format('ALTER TABLE %s RENAME COLUMN %I TO %I', c.home, c.name,
            lower(replace(c.name, '.', '_')));
        END IF;
      END LOOP;
      FOR i IN SELECT indexname FROM pg_indexes
        WHERE schemaname = 'forum' AND indexname LIKE 'objects\_%(%' LOOP
        EXECUTE format('ALTER INDEX forum.%I RENAME TO %I', i.indexname,
          left(lower(replace(replace(replace(replace(i.indexname, '(', '_'), ')', ''), ',', '_'),
            '.', '_')), 63));
      END LOOP;
      UPDATE forum.meta SET value = (value::int - 1)::text WHERE key = 'schema_version';
    END $$;
    """#

  @Test func aBoardMadeBeforeIsRenamedNotRebuilt() throws {
    let board = try installedBoard(members: ["alice"], indexes: PostgresKeyColumnNamesTests.first)
    defer { board.remove() }
    func rows(_ sql: String) throws -> [String] {
      try board.cluster.admin(sql, database: board.database).split(separator: "\n").map(String.init)
    }
    let columnsSQL = """
      SELECT attname FROM pg_attribute WHERE attrelid = 'forum.objects'::regclass
        AND attname LIKE 'key\\_%' AND NOT attisdropped ORDER BY 1
      """
    let indexesSQL = """
      SELECT indexname FROM pg_indexes WHERE schemaname = 'forum' AND indexname LIKE 'objects\\_%'
      ORDER BY 1
      """
    let madeColumns = try rows(columnsSQL)
    let madeIndexes = try rows(indexesSQL)
    #expect(madeColumns.contains("key_Note") && madeColumns.contains("key_a.b"), "\(madeColumns)")
    #expect(madeIndexes.contains("objects_Memo(Note)_by"), "\(madeIndexes)")

    let store = try Datastore.open(board["alice"].uri, rules: boardRulesForTests)
    let client = store.client(try store.loginAnonymously(secret: Datastore.newSecret()))
    let memo = try client.create(
      "Memo",
      fields: [
        "note": .string("lower"), "Note": .string("upper"),
        "a": .object(["b": .string("dotted")]), "a_b": .string("flat"),
      ])

    try board.cluster.admin(
      "SET ROLE \(board.owner.name); " + PostgresKeyColumnNamesTests.backToLegacyNames,
      database: board.database)
    #expect(try rows(columnsSQL).contains("key_note"))
    #expect(try rows(indexesSQL).contains("objects_memo_note_by"))
    // `forum init` with the same indexes: every name back, nothing built again.
    let owner = try PostgresConnection(uri: board.owner.uri)
    try PostgresSchema.install(
      on: owner, rules: boardRulesForTests, indexes: PostgresKeyColumnNamesTests.first)
    #expect(try rows(columnsSQL) == madeColumns)
    #expect(try rows(indexesSQL) == madeIndexes)

    // Then the second of each pair: a column and indexes of its own.
    try PostgresSchema.install(
      on: owner, rules: boardRulesForTests,
      indexes: PostgresKeyColumnNamesTests.first + PostgresKeyColumnNamesTests.second)
    let columns = try rows(columnsSQL)
    let indexes = try rows(indexesSQL)
    #expect(columns == (madeColumns + ["key_a_b", "key_note"]).sorted(), "\(columns)")
    #expect(
      indexes
        == (madeIndexes + [
          "objects_Memo(a_b)_by", "objects_Memo(a_b)_eq", "objects_Memo(note)_by",
          "objects_Memo(note)_eq",
        ]).sorted(), "\(indexes)")
    let reader = try Datastore.open(board["alice"].uri, rules: boardRulesForTests)
    let readerClient = reader.client(try reader.loginAnonymously(secret: Datastore.newSecret()))
    for (field, value) in [
      ("note", "lower"), ("Note", "upper"), ("a.b", "dotted"), ("a_b", "flat"),
    ] {
      let found = try readerClient.find(
        Query(className: "Memo", equalTo: [field: .string(value)], limit: 10))
      #expect(found.map(\.objectId) == [memo.objectId], "\(field) = \(value)")
    }
  }

  /// A name past PostgreSQL's 63 bytes is cut to its start and a hash of the whole: two long
  /// names alike at their start stay two, and the SQL of `keyColumnNamesStep` gives the same.
  @Test func longNamesStayApart() throws {
    let long = String(repeating: "abcdefgh", count: 8)
    let a = PostgresSchema.identifier("key_" + long + ".x")
    let b = PostgresSchema.identifier("key_" + long + ".y")
    #expect(a != b && a.utf8.count <= 63 && b.utf8.count <= 63)
    #expect(PostgresSchema.identifier("key_short") == "key_short")
    let cluster = try PostgresTestCluster.shared()
    let name = "key_" + long + ".x"
    let sql = try cluster.admin(
      "SELECT left('\(name)', 46) || '_' || left(encode(sha256(convert_to('\(name)', 'UTF8')), "
        + "'hex'), 16)"
    ).trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(sql == a)
  }
}
