import EngineTestSupport
import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// The rules have one encoding (`EngineRules.record`); boards record it, and a board made by an
/// earlier forum must find the same text and the same triggers, or SQLite reinstalls its
/// triggers and PostgreSQL asks for `forum init`.
@Suite("the rules' one encoding")
struct RulesEncodingTests {
  /// What main at 05fff26 recorded for the board's rules (SQLite `meta.rules` after "7 ").
  static let recordedByMain = #"""
    {"children":[{"activityField":"lastActivity","childClass":"Comment","countField":"commentCount","fileField":"fileName","lastNumberField":"lastCommentNumber","numberField":"number","parentClass":"Thread","parentField":"thread"},{"activityField":"lastActivity","childClass":"Message","countField":"messageCount","lastNumberField":"lastMessageNumber","numberField":"number","parentClass":"Conversation","parentField":"conversation"}],"moderation":[{"className":"Thread","contentFields":["title","description","image","fileName"],"fileField":"fileName","markField":"moderatedDate","role":"moderator"},{"className":"Comment","contentFields":["text"],"markField":"moderatedDate","role":"moderator"}],"owners":[{"additionalWriters":[],"className":"Thread","field":"user"},{"additionalWriters":[],"className":"Comment","field":"user"},{"additionalWriters":[],"className":"Message","field":"user"},{"additionalWriters":[],"className":"Preference","field":"user"}],"pairs":[{"className":"Conversation","ownerField":"user","pairField":"pair","partnerField":"partner"}],"revisions":[{"className":"Thread","editDateField":"editDate","fields":["title","description"]},{"className":"Comment","editDateField":"editDate","fields":["text"]}],"sequences":[{"className":"Thread","field":"number","sequence":"threadNumber"}]}
    """#

  /// What the pin (a `FlagRule`, issue 20) and the lock (one that locks children, issue 31)
  /// added to the record: boards recorded before read back as the same rules without them, so
  /// nothing on them is pinned or locked.
  static let pinsMember =
    #""flags":[{"className":"Thread","field":"pinnedDate","role":"moderator"},"#
    + #"{"className":"Thread","field":"lockedDate","locksChildren":true,"role":"moderator"}],"#

  /// What the stewards (a `StewardRule`, issue 32: bans and the posting budget) added.
  static let stewardsMember =
    #","stewards":[{"bannedRole":"banned","role":"moderator","settings":["postsPerMinute"]}]"#

  @Test func theBoardsRulesEncodeAsBoardsRecordedThem() throws {
    var withoutPins = Board.rules
    withoutPins.flags = []
    withoutPins.stewards = []
    #expect(withoutPins.encoding == Self.recordedByMain)
    #expect(try EngineRules(record: JSONValue.parse(Self.recordedByMain)) == withoutPins)
    #expect(
      Board.rules.encoding.replacing(Self.pinsMember, with: "").replacing(
        Self.stewardsMember, with: "") == Self.recordedByMain)
    #expect(try EngineRules(record: JSONValue.parse(Board.rules.encoding)) == Board.rules)
  }

  /// PostgreSQL records a fingerprint of the trigger SQL it generated at `forum init`; the same
  /// rules must give the same SQL, or every board made before asks for `forum init`. Pinned
  /// anew when the triggers change on purpose with a schema step (which needs `forum init`
  /// anyway): e229d41fc5deb075 at 05fff26, read from `forum.meta`; this one since schema step 11
  /// (private threads' rows, dcb12a2); aea80ba13350e433 since the pin (`forum.set_flag`, and
  /// the guard keeps `pinnedDate`): a board made before is served by its recorded rules until
  /// its owner's next command installs these; 17c3101693b31313 since schema step 16 (a row
  /// changing tables keeps its `creator`, issue 28 H5); c714a3656cd334ab since schema step 22
  /// (the stewards' `forum.refuse_banned`, issue 32); 9a5d543c1884b8d5 since the lock (issue
  /// 31: the guard keeps `lockedDate`, a comment's insert refuses a locked thread; installed by
  /// the owner's next command, as the pin's were).
  @Test func postgresGeneratesTheTriggersOfTheMainBefore() {
    #expect(PostgresRules(Board.rules).fingerprint == "9a5d543c1884b8d5")
    var withoutPins = Board.rules
    withoutPins.flags = []
    #expect(PostgresRules(withoutPins).fingerprint == "b7a7165e1cb021d2")
    withoutPins.stewards = []
    #expect(PostgresRules(withoutPins).fingerprint == "fa7d2e2a49e2e0fe")
  }

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
