import Testing

@testable import Datastore

@Suite("Engine by location")
struct EngineKindTests {
  @Test(arguments: [
    ("board.sqlite", EngineKind.sqlite), ("/srv/forum/board.sqlite", .sqlite),
    ("./postgresql://x", .sqlite), ("postgresql:/no-authority", .sqlite),
    ("postgresql://", .postgres), ("postgresql://alice@db.example/forum", .postgres),
    ("postgres://localhost/forum?sslmode=require", .postgres), ("PostgreSQL://host/db", .postgres),
  ])
  func locationNamesTheEngine(_ location: String, _ kind: EngineKind) {
    #expect(EngineKind(location: location) == kind)
  }

  @Test func badRulesAreRefusedBeforeAnythingIsOpened() throws {
    let rules = EngineRules(sequences: [
      SequenceRule(className: "T", field: "n'; --", sequence: "s")
    ])
    let error = expectError(.invalid) {
      try Datastore.open("/nonexistent/dir/x.sqlite", rules: rules)
    }
    #expect(error?.field == "rules")
  }
}
