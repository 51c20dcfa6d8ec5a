import Testing

@testable import Datastore
@testable import ForumCLI

/// PostgreSQL's refusals are read by their state alone (`PostgresRefusal`): an `FA401` no longer
/// brings the server's "sign in first" along, so the sentence comes from `Messages`, as every
/// command says it (the live view and a failed open show `failure`).
@Suite("refusals said by their code")
struct RefusalMessageTests {
  @Test func aServerRefusalIsSaidAsACommandSaysIt() {
    for japanese in [false, true] {
      let messages = Messages(japanese: japanese)
      let signIn = PostgresError(sqlState: "FA401", message: "sign in first", sql: nil)
      #expect(
        messages.failure(signIn.datastoreError)
          == (japanese ? "セッションが無効です。" : "Your session is no longer valid."))
      let refused = PostgresError(sqlState: "FA403", message: "only moderators", sql: nil)
      #expect(
        messages.failure(refused.datastoreError)
          == (japanese ? "権限がないようです。" : "You don't have permission to do that."))
      // The server's own refusal keeps its words, after a head in the reader's language.
      let denied = PostgresError(
        sqlState: "42501", message: "permission denied for table objects", sql: nil)
      let said = messages.failure(denied.datastoreError)
      #expect(said.contains("permission denied for table objects"))
      #expect(said.hasPrefix("権限がないようです。") == japanese, "\(said)")
    }
  }
}
