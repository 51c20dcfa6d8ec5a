import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// The rules have one encoding (`EngineRules.record`); boards record it, and a board made by an
/// earlier forum must find the same text and the same triggers, or SQLite reinstalls its
/// triggers and PostgreSQL asks for `forum init`. The board's own record and PostgreSQL
/// fingerprint, which move with every rule, are pinned with the rest of its SQL
/// (`RulesSQLPinTests`).
@Suite("the rules' one encoding")
struct RulesEncodingTests {
  @Test func theSignatureIsAHashOfTheEncoding() {
    #expect(Board.rules.signature.count == 64)
    #expect(Board.rules.signature == SHA256.hex(SHA256.hash(Board.rules.encoding)))
    #expect(EngineRules().signature != Board.rules.signature)
  }

  /// The board's rules as a forum before the `Preference` owner rule recorded them.
  static let olderRules = EngineRules(
    sequences: Board.rules.sequences,
    owners: Board.rules.owners.filter { $0.className != Board.preferenceClass },
    children: Board.rules.children, pairs: Board.rules.pairs, revisions: Board.rules.revisions,
    moderation: Board.rules.moderation)

  /// A PostgreSQL board whose rules an older forum installed: its members keep using it under the
  /// rules the database enforces (main asked them for `forum init`); the schema's owner opening
  /// it installs this forum's rules at once.
  @Test func olderRulesOnPostgreSQLMigrateWithoutForumInit() throws {
    #expect(Self.olderRules != Board.rules)
    let database = try PostgresFixture().makeDatabase(
      rules: Self.olderRules, indexes: Board.indexes)
    let root = try makeTemporaryDirectory("RulesEncodingTests")
    defer { try? FileManager.default.removeItem(atPath: root) }
    let profiles = ProfileStore(directory: root + "/profiles")

    let member = try Board(
      location: try database.location(as: "alice"), profile: "alice", profiles: profiles)
    #expect(member.store.rules == Self.olderRules, "the member works under the installed rules")
    try member.createThread(title: "still here", description: "", image: nil)

    let owner = try Datastore.open(
      database.ownerLocation, rules: Board.rules, indexes: Board.indexes)
    #expect(owner.rules == Board.rules, "the owner's open installed this forum's rules")
    let again = try Board(
      location: try database.location(as: "bob"), profile: "bob", profiles: profiles)
    #expect(again.store.rules == Board.rules)
    #expect(try again.threads(page: 1).items.map(\.title) == ["still here"])
  }
}
