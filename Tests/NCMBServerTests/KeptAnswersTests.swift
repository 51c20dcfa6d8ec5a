import Testing

@testable import Datastore
@testable import NCMBServer

/// The server-wide kept answers (`KeptAnswers`) moved past writes by many connections at once:
/// the written objects are read outside their lock (a read under it held every other
/// connection's request), and an answer kept meanwhile is never given after a write it missed.
@Suite("Kept answers across connections")
struct KeptAnswersTests {
  private func mark(feed: Int64) -> StateMark {
    StateMark(feed: feed, identity: 0, meta: 0, files: 0, quiet: 0)
  }

  private func answer(_ text: String) -> HTTPResponse {
    HTTPResponse(status: 200, headers: [], body: Array(text.utf8))
  }

  /// An answer to a find of comments (every comment of the class).
  private let comments = ReadCache.Dependence(
    className: "Comment", kind: .query(scope: nil), ids: [], readsBookkeeping: false)

  private func written(after feed: Int64) -> [WrittenObject] {
    [
      WrittenObject(
        sequence: feed + 1, className: "Comment", objectId: "c\(feed + 1)", parentId: nil,
        kind: .created)
    ]
  }

  /// The byte search that tells a query's operators and bookkeeping fields finds what
  /// `String.contains` finds, wherever the name sits, in any text.
  @Test func aNameIsFoundAsStringContainsFindsIt() {
    let texts = [
      "", "$", "{\"a\":{\"$inQuery\":{}}}", "$inQuer", "x$inQuery", "$inQuery",
      "{\"commentCount\":{\"$gt\":1}}", "-lastActivity,createDate", "日本語$select本",
      "$notInQuery", "$inQ$inQuery",
    ]
    let names = ["$inQuery", "$select", "commentCount", "lastActivity", "$", ""]
    for text in texts {
      for name in names {
        #expect(
          ReadCache.Dependence.contains(text, name) == text.contains(name),
          "\(name) in \(text)")
      }
    }
  }

  @Test func theWrittenObjectsAreReadWithoutHoldingTheAnswers() throws {
    let kept = KeptAnswers()
    try kept.advance(to: mark(feed: 1), now: 0, written: { _ in [] }, rules: { EngineRules() })
    var lockedWhileReading: Bool?
    try kept.advance(
      to: mark(feed: 2), now: 0,
      written: { after in
        lockedWhileReading = kept.isLockedNow
        return written(after: after)
      }, rules: { EngineRules() })
    #expect(lockedWhileReading == false)
  }

  @Test func anAnswerKeptWhileAnotherConnectionReadsIsStillEmptied() throws {
    let kept = KeptAnswers()
    let before = mark(feed: 1)
    let after = mark(feed: 2)
    try kept.advance(to: before, now: 0, written: { _ in [] }, rules: { EngineRules() })
    kept.keep(answer("old"), for: "first", comments, readAt: before, flushes: kept.flushCount)
    try kept.advance(
      to: after, now: 0,
      written: { from in
        // Another connection, still at the old state, keeps what it read there; one already
        // at the new state may not keep yet (the answers are not moved to it).
        kept.keep(answer("old too"), for: "second", comments, readAt: before, flushes: 0)
        kept.keep(answer("new"), for: "third", comments, readAt: after, flushes: 0)
        return written(after: from)
      }, rules: { EngineRules() })
    #expect(kept.keptKeys.isEmpty)
    kept.keep(answer("new"), for: "third", comments, readAt: after, flushes: kept.flushCount)
    #expect(kept.keptKeys == ["third"])
  }

  @Test func aConnectionThatReadLessThanAnotherAppliedChangesNothingBack() throws {
    let kept = KeptAnswers()
    try kept.advance(to: mark(feed: 1), now: 0, written: { _ in [] }, rules: { EngineRules() })
    // One connection reads the writes up to 3; another moves the answers to 5 meanwhile.
    try kept.advance(
      to: mark(feed: 3), now: 0,
      written: { from in
        try? kept.advance(
          to: mark(feed: 5), now: 0, written: { self.written(after: $0) },
          rules: { EngineRules() })
        return written(after: from)
      }, rules: { EngineRules() })
    // Still at 5: an answer read there is kept, one read at 3 is not.
    kept.keep(answer("at 3"), for: "old", comments, readAt: mark(feed: 3), flushes: 0)
    kept.keep(answer("at 5"), for: "new", comments, readAt: mark(feed: 5), flushes: 0)
    #expect(kept.keptKeys == ["new"])
  }

  /// An app asking for tiny answers, each its own (a count with its own `where`), does not make
  /// the server keep them without end: an answer counts its key, headers, entry and index slots,
  /// not its body alone (at 128 MB of bodies, 5 million such answers fitted: gigabytes).
  @Test func tinyAnswersCountWhatKeepingThemTakes() throws {
    let kept = KeptAnswers()
    try kept.advance(to: mark(feed: 1), now: 0, written: { _ in [] }, rules: { EngineRules() })
    let headers = [(name: "Content-Type", value: "application/json")]
    let body = Array(#"{"results":[],"count":0}"#.utf8)
    let asked = 200_000
    for index in 0..<asked {
      let key =
        "GET /2013-09-01/classes/Comment?count=1&limit=0&where=%7B%22n%22%3A\(index)%7D\n"
        + "user:Ab12Cd34Ef56Gh78"
      kept.keep(
        HTTPResponse(status: 200, headers: headers, body: body), for: key, comments,
        readAt: mark(feed: 1), flushes: kept.flushCount)
    }
    #expect(kept.keptCount < asked, "every tiny answer kept: \(kept.keptCount)")
    #expect(kept.keptCost <= KeptAnswers.maximumBytes)
  }

  @Test func tooManyWrittenObjectsEmptyEverything() throws {
    let kept = KeptAnswers()
    try kept.advance(to: mark(feed: 1), now: 0, written: { _ in [] }, rules: { EngineRules() })
    let other = ReadCache.Dependence(
      className: "Thread", kind: .object("t1"), ids: ["t1"], readsBookkeeping: false)
    kept.keep(answer("t1"), for: "thread", other, readAt: mark(feed: 1), flushes: 0)
    try kept.advance(to: mark(feed: 9), now: 0, written: { _ in nil }, rules: { EngineRules() })
    #expect(kept.keptKeys.isEmpty)
  }
}
