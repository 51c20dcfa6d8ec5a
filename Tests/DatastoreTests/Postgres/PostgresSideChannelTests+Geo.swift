import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore

/// Issue 34: `$within` and `$nearSphere` on PostgreSQL, with the GeoPoint field indexed
/// (`forum index geo`) as an app's owner would, under every plan a member can push the planner
/// into: Carol's box or distance over the 2,000 private spots Alice keeps around Tokyo shows the
/// same plan, rows and buffers as the same probe over an empty sea, among 20,000 public spots.
extension PostgresSideChannelTests {
  /// A box or a distance around `center` (degrees), as the engine writes them.
  static func geoProbes(_ center: GeoPoint) -> [(String, Query)] {
    var box = Query(className: "Spot", limit: 100)
    box.conditions = [
      .withinBox(
        "location",
        southwest: GeoPoint(latitude: center.latitude - 0.1, longitude: center.longitude - 0.1),
        northeast: GeoPoint(latitude: center.latitude + 0.1, longitude: center.longitude + 0.1))
    ]
    var near = Query(className: "Spot", limit: 100)
    near.conditions = [.near("location", center, maxRadians: 10 / 6371)]
    near.nearest = ("location", center)
    return [("box", box), ("near", near)]
  }

  /// The `find` and `count` statements `engine` runs for `query` as `principals`.
  static func statements(_ engine: PostgresEngine, _ query: Query, _ principals: Principals)
    -> [(String, [PostgresValue])]
  {
    let find = PostgresEngine.findStatement(
      query, as: principals, keyColumns: engine.keyColumns, rules: boardRulesForTests,
      privateClasses: engine.privateClasses)
    let from = PostgresEngine.source(
      query.className, privateClasses: engine.privateClasses, keyColumns: engine.keyColumns)
    let filter = PostgresEngine.whereClause(
      query, principals, keyColumns: engine.keyColumns, rules: boardRulesForTests)
    return [find, ("SELECT count(*) FROM \(sql: from) \(sql: filter)" as SQL).postgres]
  }

  /// The observations of each statement for each center, in up to five rounds until the
  /// centers agree (`observedAlike`).
  static func observedGeo(
    _ connection: PostgresConnection, _ engine: PostgresEngine, _ principals: Principals,
    _ centers: [GeoPoint], attempts: Int = 12
  ) throws -> [[String]] {
    var seen: [[String]] = []
    // Each observation is settled past the catalog reads of a role change or a vacuum
    // elsewhere (`observation`); the centers are asked again in case the settled figures
    // moved between them (a role change can leave a catalog page more to read). A difference
    // that follows the data stays in every attempt, and is what fails.
    for attempt in 0..<attempts {
      if attempt > 0 { usleep(250_000) }
      seen = try centers.map { center in
        try geoProbes(center).flatMap { _, query in
          try statements(engine, query, principals).map { sql, values in
            try observation(connection, sql, values)
          }
        }
      }
      if Set(seen).count == 1 { break }
    }
    return seen
  }

  @Test(
    "a GeoPoint box or distance over others' private spots, every planner setting: plans, rows and buffers alike"
  )
  func geoProbesUnderEveryPlan() throws {
    let scene = try PostgresSideChannelTests.scene(messages: 20)
    defer { scene.board.remove() }
    let alice = scene.ids["alice"]!
    // Alice's private spots around Tokyo station.
    try scene.alice.execute(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Spot', 'A' || lpad(i::text, 15, '0'), '{\(alice)}', '{\(alice)}',
        jsonb_build_object('name', 'secret ' || i, 'location', jsonb_build_object(
          '__type', 'GeoPoint', 'latitude', 35.60 + (i % 100) * 0.002,
          'longitude', 139.70 + (i / 100) * 0.004))
      FROM generate_series(1, 2000) AS i
      """)
    // Public spots all over Japan, none in the two bands of latitude probed: an index range
    // holding public rows costs what they cost, whoever else has rows there.
    let owner = try PostgresConnection(uri: scene.board.owner.uri)
    try owner.execute(
      """
      INSERT INTO forum.objects(class, object_id, readers, writers, data)
      SELECT 'Spot', 'P' || lpad(i::text, 15, '0'), '{*}', '{*}',
        jsonb_build_object('name', 'public ' || i, 'location', jsonb_build_object(
          '__type', 'GeoPoint', 'latitude', 33 + ((i * 7919) % 100003) / 100003.0 * 10,
          'longitude', 130 + ((i * 104729) % 99991) / 99991.0 * 12))
      FROM generate_series(1::bigint, 20000) AS i
      WHERE NOT (33 + ((i * 7919) % 100003) / 100003.0 * 10 BETWEEN 35.3 AND 36.0)
        AND NOT (33 + ((i * 7919) % 100003) / 100003.0 * 10 BETWEEN 33.6 AND 34.4)
      """)
    try Datastore.addIndex(IndexSpec(geoOf: "Spot", field: "location"), at: scene.board.owner.uri)
    try scene.board.cluster.admin("ANALYZE", database: scene.board.database)
    let tokyo = GeoPoint(latitude: 35.70, longitude: 139.80)
    // As far from every public spot as Tokyo is, in a band of its own.
    let sea = GeoPoint(latitude: 34.0, longitude: 139.80)
    var engines: [String: (PostgresEngine, Principals, PostgresConnection)] = [:]
    for (name, connection) in [("carol", scene.carol), ("alice", scene.alice)] {
      let engine = try PostgresEngine(uri: scene.board[name].uri)
      try engine.prepare(rules: boardRulesForTests, indexes: PostgresSideChannelTests.indexes)
      #expect(engine.keyColumns.contains("geo_location_lat"))
      engines[name] = (engine, Principals(userId: scene.ids[name]!), connection)
    }
    let (carol, carolPrincipals, _) = engines["carol"]!
    let (aliceEngine, alicePrincipals, _) = engines["alice"]!
    for setting in PostgresSideChannelTests.plannerSettings {
      for connection in [scene.carol, scene.alice] {
        try connection.execute("RESET ALL")
        if !setting.isEmpty { try connection.execute("SET \(setting)") }
      }
      let label = setting.isEmpty ? "default settings" : setting
      let seen = try Self.observedGeo(scene.carol, carol, carolPrincipals, [tokyo, sea])
      for (index, (held, none)) in zip(seen[0], seen[1]).enumerated() {
        #expect(
          held == none,
          "\(label), \(["box find", "box count", "near find", "near count"][index]):\n\(held)\n\(none)"
        )
      }
      // The probe tells what does differ: Alice, who may read them, sees her spots.
      let aliceSees = try Self.observedGeo(
        scene.alice, aliceEngine, alicePrincipals, [tokyo, sea], attempts: 1)
      #expect(aliceSees[0] != aliceSees[1], "\(label)")
      // And the answers are right under every plan.
      for (what, query) in Self.geoProbes(tokyo) {
        let (carolSQL, carolValues) = Self.statements(carol, query, carolPrincipals)[1]
        let (aliceSQL, aliceValues) = Self.statements(aliceEngine, query, alicePrincipals)[1]
        let counts = [
          try scene.carol.query(carolSQL, carolValues).int(0, 0),
          try scene.alice.query(aliceSQL, aliceValues).int(0, 0),
        ]
        #expect(counts[0] == 0 && counts[1] > 100, "\(label), \(what): \(counts)")
      }
    }
    // The default plan seeks the index (no scan of the class) for Carol too.
    try scene.carol.execute("RESET ALL")
    for (what, query) in Self.geoProbes(tokyo) {
      let (sql, values) = Self.statements(carol, query, carolPrincipals)[0]
      let plan = try scene.carol.query("EXPLAIN " + sql, values)
      let text = plan.rows { plan.text($0, 0) ?? "" }.joined(separator: "\n")
      #expect(text.contains("objects_geo_Spot_location"), "\(what)\n\(text)")
    }
  }
}
