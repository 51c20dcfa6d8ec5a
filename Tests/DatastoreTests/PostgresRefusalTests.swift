import Testing

@testable import Datastore

/// PostgreSQL's refusals are read by their state, as SQLite's by `TriggerRefusal`: the state
/// names the backend code, and no words but an `FA400`'s field name are ever read.
@Suite("PostgreSQL refusals by name")
struct PostgresRefusalTests {
  @Test func theStateNamesTheCode() {
    for (state, code) in [
      ("FA400", ErrorCode.invalid), ("FA401", .authentication), ("FA403", .noAccess),
      ("FA404", .notFound),
    ] {
      let refusal = PostgresRefusal(sqlState: state, message: "partner")
      #expect(refusal?.code == code, "\(state)")
      let error = PostgresError(sqlState: state, message: "partner", sql: nil).datastoreError
      #expect(error.code == code && error.detail == nil, "\(state)")
    }
    #expect(PostgresRefusal(sqlState: "FA999", message: "x") == nil)
    #expect(PostgresRefusal(sqlState: nil, message: "x") == nil)
    #expect(PostgresRefusal(sqlState: "23505", message: "x") == nil)
  }

  /// Only a name is taken for a field; words (an old message, a member's RAISE) are not.
  @Test func onlyANameIsAField() {
    #expect(PostgresRefusal(sqlState: "FA400", message: "className")?.field == "className")
    #expect(PostgresRefusal(sqlState: "FA400", message: "drop me; now")?.field == "value")
    #expect(PostgresRefusal(sqlState: "FA403", message: "only moderators")?.field == nil)
  }

  /// The SQL the rules render and the reader agree on one format.
  @Test func theSQLIsTheReadersFormat() {
    #expect(
      PostgresRefusal(.notFound).sql()
        == "RAISE EXCEPTION USING ERRCODE = 'FA404', MESSAGE = 'No data available.';")
    #expect(
      PostgresRefusal(.invalid, field: "field").sql()
        == "RAISE EXCEPTION USING ERRCODE = 'FA400', MESSAGE = 'field';")
    #expect(
      PostgresRefusal(.noAccess).sql(saying: "the owner's")
        == "RAISE EXCEPTION USING ERRCODE = 'FA403', MESSAGE = 'the owner''s';")
    #expect(PostgresError(sqlState: "40P01", message: "", sql: nil).isRetryable)
    #expect(!PostgresError(sqlState: "FA403", message: "", sql: nil).isRetryable)
  }
}
