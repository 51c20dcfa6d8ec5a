import Testing

@testable import Datastore
@testable import Forum

/// The SQL both engines render from the board's rules, pinned as it was on main at 86f22d9 (before
/// the rules were compiled into one plan, issue 20): rendering from `WritePlan` instead of
/// walking `EngineRules` must not change a byte of it. SQLite records only its rules' format
/// (`SQLiteRules.format`), so a change here without a bump would leave open files on older
/// triggers; PostgreSQL records a fingerprint of `triggerSQL`, so a change is a migration every
/// board's owner runs on their next command (pinned below).
/// Every pin of the board's whole rules is here: its record, its PostgreSQL fingerprint, the SQL
/// both engines render, the plan of a comment's insert and the fields kept from a thread's
/// writer. They move on purpose when a rule is added (a migration: bump `SQLiteRules.format`),
/// in this one file; the board without flags and no rules at all stay as main rendered them.
@Suite("the rules' SQL, pinned")
struct RulesSQLPinTests {
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
  /// the owner's next command, as the pin's were); 7d3c240e82021847 since an import's rows are
  /// in the change feed and an import's count-up of a parent leaves its date (installed by the
  /// owner's next command).
  @Test func postgresGeneratesTheTriggersOfTheMainBefore() {
    #expect(PostgresRules(Board.rules).fingerprint == "7d3c240e82021847")
    var withoutPins = Board.rules
    withoutPins.flags = []
    #expect(PostgresRules(withoutPins).fingerprint == "5ca1234b2a00f194")
    withoutPins.stewards = []
    #expect(PostgresRules(withoutPins).fingerprint == "4a7fb2d74b361010")
  }

  @Test func aCommentsInsertIsTheBoards() {
    let comments = Board.rules.childRule(of: Board.commentClass)!
    let lock = Board.rules.flagRule(of: Board.threadClass, field: "lockedDate")!
    #expect(
      Board.rules.plan.insert(of: Board.commentClass) == [
        .ownedByCaller(Board.rules.owner(of: Board.commentClass)!),
        .requireReadableParent(comments), .refuseWhileParentLocked(comments, lock),
        .inheritParentReaders(comments), .numberFromParent(comments), .countParentUp(comments),
        .touchParentActivity(comments),
      ])
  }

  @Test func theFieldsKeptFromAThreadsWriterAreTheBoards() {
    #expect(
      Board.rules.plan.kept(of: Board.threadClass).map(\.field) == [
        "editDate", "moderatedDate", "pinnedDate", "lockedDate", "number", "user", "commentCount",
        "lastCommentNumber", "lastActivity", "fileName",
      ])
  }

  static func digest(_ text: String) -> String { SHA256.hex(SHA256.hash(text)) }
  static func digest(_ texts: [String]) -> String { digest(texts.joined(separator: "\n;\n")) }

  /// The rule sets pinned: the board's, the board's before the pin, and none at all.
  static var ruleSets: [(name: String, rules: EngineRules)] {
    var withoutPins = Board.rules
    withoutPins.flags = []
    return [("board", Board.rules), ("board without pins", withoutPins), ("none", EngineRules())]
  }

  static let classes = [
    Board.threadClass, Board.commentClass, Board.messageClass, Board.preferenceClass,
    Board.conversationClass, "Other",
  ]

  /// Every text SQLite renders from `rules`, named.
  static func sqliteTexts(_ rules: EngineRules) -> [(String, String)] {
    var texts = [
      ("triggers", digest(SQLiteRules.triggers(for: rules))),
      ("changeTriggers", digest(SQLiteRules.changeTriggers(for: rules))),
      ("ownerIndexes", digest(SQLiteRules.ownerIndexes(for: rules))),
      ("pairIndexes", digest(SQLiteRules.pairIndexes(for: rules))),
      ("alignments", digest(SQLiteRules.alignments(for: rules))),
    ]
    for className in classes {
      let row = SQLiteRules.newRow(
        className, rules, data: "\(SQLValue.null)", parentId: "\(SQLValue.text(""))",
        now: SQLiteRules.now)
      texts.append(
        (
          "newRow \(className)",
          digest(
            [row.data, row.parentCondition ?? "-", row.readers ?? "-"].map {
              $0.rendered(.sqlite).sql
            })
        ))
    }
    return texts
  }

  static func postgresTexts(_ rules: EngineRules) -> [(String, String)] {
    let rendered = PostgresRules(rules)
    return [
      ("triggerSQL", digest(rendered.triggerSQL)),
      ("pairIndexSQL", digest(rendered.pairIndexSQL)),
      ("privateClasses", rendered.privateClasses.sorted().joined(separator: ",")),
      (
        "managed",
        digest(classes.map { rendered.managed($0).joined(separator: ",") })
      ),
    ]
  }

  static func all() -> String {
    ruleSets.flatMap { set in
      (sqliteTexts(set.rules) + postgresTexts(set.rules)).map { "\(set.name) | \($0.0) | \($0.1)" }
    }.joined(separator: "\n")
  }

  /// Pinned from main at 86f22d9 (`swift test --filter RulesSQLPinTests` prints them on failure).
  static let pinned = """
    board | triggers | 726676a7aacc0bf31acca0fb8d574bccfa4f6171c50b556ebfa78f2a02ee4f9d
    board | changeTriggers | 0fe83c757701acca433ac27652d52e04e970a9c00f1d7ac222ed560cab916e14
    board | ownerIndexes | 6349c0a2c8214b5477e5f17fb51ee04420fc4ff821faad282fbb9181c9cceb8e
    board | pairIndexes | cc5e43597d1b24a68d689d1e07d78f8598bad1baa706dfa3051c28ef7907a0fc
    board | alignments | 8b591b377b73e7285072092425432ba551c393de1c4899f9751d174b483aa254
    board | newRow Thread | a6dae45529cc77f5dc8e058fc44f7fffbfbcc78e70f15aa7661371a38d9a2610
    board | newRow Comment | 3994fb32618b26179777c1f551f6ff748a89a72c8d1eb0a9a7960b8dc77d3d76
    board | newRow Message | 0763b7abf81621df66c50d4c05a060d3c1951b69f35d094e1042f938092ef289
    board | newRow Preference | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    board | newRow Conversation | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    board | newRow Other | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    board | triggerSQL | b770367ba9876cb924a5959e2a7720f8efaadc40b7a2aa48e581f87aabd06542
    board | pairIndexSQL | 6ec1796ad8c05bf24a0f21e11dc1feda05466db599cf1c38e078be62bb68f023
    board | privateClasses | Conversation,Message
    board | managed | ced652dbcce44f7978e8856c9bb05fc7a5df6c3adee2191a558a283abd6eb561
    board without pins | triggers | 820ba6c58ac3666df85882f2ff54fe288baa9ad9c2ede301c2186f749205d18f
    board without pins | changeTriggers | 0fe83c757701acca433ac27652d52e04e970a9c00f1d7ac222ed560cab916e14
    board without pins | ownerIndexes | 6349c0a2c8214b5477e5f17fb51ee04420fc4ff821faad282fbb9181c9cceb8e
    board without pins | pairIndexes | cc5e43597d1b24a68d689d1e07d78f8598bad1baa706dfa3051c28ef7907a0fc
    board without pins | alignments | 8b591b377b73e7285072092425432ba551c393de1c4899f9751d174b483aa254
    board without pins | newRow Thread | a6dae45529cc77f5dc8e058fc44f7fffbfbcc78e70f15aa7661371a38d9a2610
    board without pins | newRow Comment | 3994fb32618b26179777c1f551f6ff748a89a72c8d1eb0a9a7960b8dc77d3d76
    board without pins | newRow Message | 0763b7abf81621df66c50d4c05a060d3c1951b69f35d094e1042f938092ef289
    board without pins | newRow Preference | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    board without pins | newRow Conversation | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    board without pins | newRow Other | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    board without pins | triggerSQL | eeda0d749da97fd8af052fd599618892e5741203b1963dd11110ef7dffbf3396
    board without pins | pairIndexSQL | 6ec1796ad8c05bf24a0f21e11dc1feda05466db599cf1c38e078be62bb68f023
    board without pins | privateClasses | Conversation,Message
    board without pins | managed | 1e7c1e752d15edab2375b9f90178d4cd577840503bb28c375ace9610ea14e6d3
    none | triggers | c6a5132e9b7dbcdf306e140f8d63f45aa193ee1a35d7ea4013bacc3d75fcd6e0
    none | changeTriggers | c6a5132e9b7dbcdf306e140f8d63f45aa193ee1a35d7ea4013bacc3d75fcd6e0
    none | ownerIndexes | e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
    none | pairIndexes | e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
    none | alignments | e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
    none | newRow Thread | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    none | newRow Comment | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    none | newRow Message | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    none | newRow Preference | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    none | newRow Conversation | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    none | newRow Other | 25ef9cc0f292dfc351cdce7042908484321246050c225d11ad8a7f45066c5e52
    none | triggerSQL | 484b94d061d69d60517f1276ad860bd03e7d6afcb03a00efbc7fc860136ab84e
    none | pairIndexSQL | e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
    none | privateClasses | 
    none | managed | da5e8a5d471af16f6ea895f242941e3df9beb0ad3f84fc9179e441263f537efe
    """

  @Test func bothEnginesRenderTheSQLOfMain() {
    let now = Self.all()
    #expect(now == Self.pinned, "now:\n\(now)")
  }
}
