import Testing

@testable import Datastore
@testable import Forum

/// The board's rules compiled into one plan (`WritePlan`, issue 20): what each write of the
/// board does, said once, for both engines to render. An effect going missing here would go
/// missing on both engines at once, and these tests say which.
@Suite("the rules' one plan")
struct WritePlanTests {
  static let plan = Board.rules.plan
  static var comments: ChildRule { Board.rules.childRule(of: Board.commentClass)! }
  static var messages: ChildRule { Board.rules.childRule(of: Board.messageClass)! }

  @Test func aCommentIsNumberedCountedAndReadLikeItsThread() {
    let owner = Board.rules.owner(of: Board.commentClass)!
    // Its insert, which a flag of its thread may take part in, is pinned with the board's SQL
    // (`RulesSQLPinTests.aCommentsInsertIsTheBoards`).
    #expect(
      Self.plan.delete(of: Board.commentClass) == [
        .countParentDown(Self.comments, clampAtZero: true)
      ])
    let revision = Board.rules.revisionRule(of: Board.commentClass)!
    let moderation = Board.rules.moderationRule(of: Board.commentClass)!
    #expect(
      Self.plan.update(of: Board.commentClass) == [
        .keepRevision(revision, skipTombstoneOf: moderation),
        .readersStayTheParents(Self.comments), .writersStayTheOwner(owner),
        .tombstoneIsFinal(moderation),
      ])
    #expect(Self.plan.readersChange(of: Board.commentClass).isEmpty)
  }

  @Test func aThreadIsNumberedStartsItsCountersAndTakesItsCommentsAndFileAlong() {
    let sequence = Board.rules.sequences[0]
    #expect(
      Self.plan.insert(of: Board.threadClass) == [
        .nextInSequence(sequence), .ownedByCaller(Board.rules.owner(of: Board.threadClass)!),
        .parentFileWritable(Self.comments, field: "fileName"),
        .startParentCounters(Self.comments),
      ])
    #expect(
      Self.plan.delete(of: Board.threadClass) == [
        .deleteChildren(Self.comments), .deleteFile(Self.comments, field: "fileName"),
      ])
    #expect(Self.plan.readersChange(of: Board.threadClass) == [.childrenFollow(Self.comments)])
    let moderation = Board.rules.moderationRule(of: Board.threadClass)!
    #expect(
      Self.plan.update(of: Board.threadClass).first
        == .keepRevision(
          Board.rules.revisionRule(of: Board.threadClass)!, skipTombstoneOf: moderation))
    #expect(Self.plan.update(of: Board.threadClass).contains(.tombstoneIsFinal(moderation)))
  }

  @Test func aConversationIsAPairWhoseMessagesFollowIt() {
    let pair = Board.rules.pairRule(of: Board.conversationClass)!
    #expect(
      Self.plan.insert(of: Board.conversationClass) == [
        .pairOfCaller(pair), .startParentCounters(Self.messages),
      ])
    #expect(Self.plan.update(of: Board.conversationClass) == [.pairKeepsItsACL(pair)])
    #expect(Self.plan.delete(of: Board.conversationClass) == [.deleteChildren(Self.messages)])
    #expect(
      Self.plan.readersChange(of: Board.conversationClass) == [.childrenFollow(Self.messages)])
    #expect(
      Self.plan.insert(of: Board.messageClass).contains(.inheritParentReaders(Self.messages)))
    #expect(
      Self.plan.delete(of: Board.messageClass) == [
        .countParentDown(Self.messages, clampAtZero: true)
      ])
  }

  @Test func theFeedNamesChildrensParentsAndNumbers() {
    #expect(
      Self.plan.feed.map(\.className) == [
        Board.commentClass, Board.messageClass, Board.commentClass, Board.messageClass,
        Board.threadClass,
      ])
    #expect(Self.plan.feed[0].effect == .parent(Self.comments))
    #expect(Self.plan.feed[4].effect == .number(field: "number"))
  }

  /// What a client may not send is the plan's list, read by the client's checks (the thread's
  /// whole list, flags included, is pinned in `RulesSQLPinTests`).
  @Test func theFieldsKeptFromClientsAreThePlans() {
    let kept = Self.plan.kept(of: Board.threadClass)
    #expect(kept.filter(\.fixed).map(\.field) == ["fileName"])
    #expect(kept.filter { !$0.guarded }.map(\.field) == ["fileName"])
    #expect(Board.rules.fixedFields(of: Board.commentClass) == ["thread"])
    #expect(
      Board.rules.managedFields(of: Board.commentClass) == [
        "editDate", "moderatedDate", "number", "user",
      ])
    #expect(Board.rules.keptFields(of: Board.conversationClass).first == "user")
  }

  /// The plan has no encoding of its own: it is a pure function of the rules, so the rules read
  /// back from their one encoding (what a board records, signed by `signature`) give the same
  /// plan, and rules that differ give different signatures whatever their plans.
  @Test func thePlanIsTheRulesEncodingCompiled() throws {
    let recorded = try EngineRules(record: JSONValue.parse(Board.rules.encoding))
    #expect(recorded.plan == Self.plan)
    #expect(recorded.signature == Board.rules.signature)
    #expect(EngineRules().plan.insert.isEmpty && EngineRules().plan.classes.isEmpty)
    var withoutPins = Board.rules
    withoutPins.flags = []
    #expect(withoutPins.plan != Self.plan, "the pin is kept from clients")
  }
}
