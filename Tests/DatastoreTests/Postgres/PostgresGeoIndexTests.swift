import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Issue 34: an app's GeoPoint field indexed on PostgreSQL (`forum index geo Spot location`,
/// schema step 22). Row-level security keeps every jsonb comparison out of an index condition
/// (none is leakproof), so the coordinates are float8 columns kept from the object, whose
/// comparisons are: a `$within` box and a `$nearSphere` with a distance seek the class's index
/// on 100,000 spots, as a member with psql and as the server's role acting for an app user, and
/// answer what they answered by the scan.
@Suite("PostgreSQL: GeoPoints indexed")
struct PostgresGeoIndexTests {
  static let tokyo = GeoPoint(latitude: 35.681, longitude: 139.767)

  static func box() -> Query {
    var query = Query(className: "Spot", limit: 1000)
    query.conditions = [
      .withinBox(
        "location", southwest: GeoPoint(latitude: 35.60, longitude: 139.60),
        northeast: GeoPoint(latitude: 35.80, longitude: 139.90))
    ]
    return query
  }

  /// Within 10 km of Tokyo station, nearest first.
  static func near() -> Query {
    var query = Query(className: "Spot", limit: 1000)
    query.conditions = [.near("location", tokyo, maxRadians: 10 / 6371)]
    query.nearest = ("location", tokyo)
    return query
  }

  /// A box across the 180th meridian: two ranges of longitude.
  static func acrossTheDateLine() -> Query {
    var query = Query(className: "Spot", limit: 1000)
    query.conditions = [
      .withinBox(
        "location", southwest: GeoPoint(latitude: -20, longitude: 179),
        northeast: GeoPoint(latitude: -10, longitude: -179))
    ]
    return query
  }

  /// `count` public spots spread over Japan (a fixed pseudo-random spread), a few across the
  /// date line, and rows whose `location` is no GeoPoint a column could hold.
  static func seed(_ owner: PostgresConnection, count: Int) throws {
    try owner.execute(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Spot', 'S' || lpad(i::text, 15, '0'), '{*}', '{*}',
        jsonb_build_object('name', 'spot ' || i, 'location', jsonb_build_object(
          '__type', 'GeoPoint',
          'latitude', 30 + ((i * 7919) % 100003) / 100003.0 * 15,
          'longitude', 128 + ((i * 104729) % 99991) / 99991.0 * 18))
      FROM generate_series(1::bigint, \(count)) AS i;
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Spot', 'D' || lpad(i::text, 15, '0'), '{*}', '{*}',
        jsonb_build_object('name', 'dateline ' || i, 'location', jsonb_build_object(
          '__type', 'GeoPoint', 'latitude', -15, 'longitude', 178.5 + i * 0.25))
      FROM generate_series(1, 8) AS i;
      INSERT INTO forum.objects(class, object_id, readers, writers, data) VALUES
        ('Spot', 'X000000000000001', '{*}', '{*}', '{"name":"none"}'),
        ('Spot', 'X000000000000002', '{*}', '{*}',
         '{"name":"text","location":{"latitude":"35.7","longitude":"139.7"}}'),
        ('Spot', 'X000000000000003', '{*}', '{*}',
         '{"name":"huge","location":{"latitude":1e400,"longitude":139.7}}');
      ANALYZE forum.objects;
      """)
  }

  /// The plan of `find` and `count` for `query` as `connection` runs them.
  static func plans(
    _ engine: PostgresEngine, _ connection: PostgresConnection, _ query: Query,
    _ principals: Principals
  ) throws -> [String] {
    let find = PostgresEngine.findStatement(
      query, as: principals, keyColumns: engine.keyColumns, rules: boardRulesForTests,
      privateClasses: engine.privateClasses)
    let from = PostgresEngine.source(
      query.className, privateClasses: engine.privateClasses, keyColumns: engine.keyColumns)
    let filter = PostgresEngine.whereClause(
      query, principals, keyColumns: engine.keyColumns, rules: boardRulesForTests)
    let count = ("SELECT count(*) FROM \(sql: from) \(sql: filter)" as SQL).postgres
    return try [find, count].map { sql, values in
      let plan = try connection.query("EXPLAIN " + sql, values)
      return plan.rows { plan.text($0, 0) ?? "" }.joined(separator: "\n")
    }
  }

  static func expectSeeks(_ plans: [String], _ what: String) {
    for (index, plan) in plans.enumerated() {
      let label = "\(what) \(index == 0 ? "find" : "count")"
      #expect(plan.contains("objects_geo_Spot_location"), "\(label)\n\(plan)")
      #expect(plan.contains("Index Cond: ((geo_location_lat >="), "\(label)\n\(plan)")
      #expect(!plan.contains("Seq Scan on objects"), "\(label)\n\(plan)")
    }
  }

  @Test("a box and a distance seek the GeoPoint index, for a member and for the server's app user")
  func boxAndNearSeekTheIndex() throws {
    let board = try installedBoard(members: ["alice"])
    defer { board.remove() }
    let owner = try PostgresConnection(uri: board.owner.uri)
    try Self.seed(owner, count: 100_000)
    let alice = try PostgresEngine(uri: board["alice"].uri)
    try alice.prepare(rules: boardRulesForTests, indexes: [])
    let login = try alice.signIn(secret: "", previousSecret: nil, sessionLifetime: 1)
    // Alice's own private spot beside the station: hers to find, by the index's query too.
    let mine = try alice.insert(
      "Spot",
      fields: [
        "name": .string("mine"),
        "location": .object([
          "__type": .string("GeoPoint"), "latitude": .double(35.6812),
          "longitude": .double(139.7671),
        ]),
      ], acl: ACL(readers: [login.user.objectId], writers: [login.user.objectId]),
      as: login.principals)
    let queries = [
      ("box", Self.box()), ("near", Self.near()), ("date line", Self.acrossTheDateLine()),
    ]
    let before = try queries.map { try alice.find($0.1, as: login.principals).map(\.objectId) }
    let counts = try queries.map { try alice.count($0.1, as: login.principals) }
    // Without the index, a box is a filter of the class's every row.
    let connection = try PostgresConnection(uri: board["alice"].uri)
    let scanned = try Self.plans(alice, connection, Self.box(), login.principals)
    #expect(!scanned[0].contains("geo_location_lat"), "\(scanned[0])")

    try Datastore.addIndex(IndexSpec(geoOf: "Spot", field: "location"), at: board.owner.uri)
    try Datastore.addIndex(IndexSpec(geoOf: "Spot", field: "location"), at: board.owner.uri)
    let indexed = try PostgresEngine(uri: board["alice"].uri)
    try indexed.prepare(rules: boardRulesForTests, indexes: [])
    #expect(indexed.keyColumns.isSuperset(of: ["geo_location_lat", "geo_location_lon"]))
    for mode in ["force_custom_plan", "force_generic_plan"] {
      try connection.execute("SET plan_cache_mode = \(mode)")
      for (what, query) in queries.prefix(2) {
        Self.expectSeeks(
          try Self.plans(indexed, connection, query, login.principals), "member, \(what), \(mode)")
      }
    }
    // The same answers, nearest first, counts too; Alice's private spot among them.
    let after = try queries.map { try indexed.find($0.1, as: login.principals).map(\.objectId) }
    #expect(after == before)
    #expect(try queries.map { try indexed.count($0.1, as: login.principals) } == counts)
    #expect(after[1].first == mine.objectId && after[0].contains(mine.objectId))
    // 179 to 180 inclusive; 180.25 and 180.5 are no longitude.
    #expect(after[2].count == 5 && counts[0] > 10, "\(after[2]) \(counts)")
    // Rows written after the index keep their columns; a value no column holds is written.
    try owner.execute(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data) VALUES
        ('Spot', 'N000000000000001', '{*}', '{*}',
         '{"name":"new","location":{"__type":"GeoPoint","latitude":35.70,"longitude":139.70}}'),
        ('Spot', 'N000000000000002', '{*}', '{*}',
         '{"name":"huge again","location":{"latitude":-1e400,"longitude":"x"}}')
      """)
    #expect(
      try indexed.find(Self.box(), as: login.principals).contains {
        $0.objectId == "N000000000000001"
      })

    // The server's role, acting for an app user (row-level security on, its own principals).
    let server = try board.cluster.role("server", database: board.database)
    try board.cluster.admin("GRANT forum_member, forum_server TO \(server.name)")
    let store = try Datastore.open(server.uri)
    let app = store.client(
      try store.loginAnonymously(secret: "3F2504E0-4F89-11D3-9A0C-0305E82C3301"))
    #expect(try app.find(Self.box()).count == counts[0])
    let engine = try #require(store.engine as? PostgresEngine)
    #expect(try engine.connection.query("SELECT forum.caller_id()").text(0, 0) == app.userId)
    let principals = Principals(userId: try #require(app.userId))
    for (what, query) in queries.prefix(2) {
      Self.expectSeeks(
        try Self.plans(engine, engine.connection, query, principals), "server, \(what)")
    }
  }

  @Test("a geo index takes one top-level field of a reasonable name")
  func badGeoIndexesAreRefused() throws {
    let board = try installedBoard(members: [])
    defer { board.remove() }
    for field in ["location.latitude", "lo cation", String(repeating: "g", count: 49)] {
      #expect(throws: DatastoreError.self) {
        try Datastore.addIndex(IndexSpec(geoOf: "Spot", field: field), at: board.owner.uri)
      }
    }
  }
}
