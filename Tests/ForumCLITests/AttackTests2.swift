import Foundation
import Testing

/// Attacks on the features of the change feed, direct messages, search, unread, edits and
/// moderation, as a hostile user or a bot piping text.
@Suite("attacks on the regular's features")
struct AttackTests2 {
  /// A script cannot enter a room, so `chat 1` is refused; the lines a bot meant to say there
  /// must never run as commands (here: deleting the thread), up to the room's `/leave`.
  @Test func aRefusedChatInAScriptRunsNoneOfItsLines() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "room", "--description", "talk here"])
    let result = try forum.script([
      "chat 1", "hello everyone", "delete 1 --yes", "//not a command", "/leave", "list",
    ])
    #expect(result.status == 2)
    #expect(result.stderr.hasPrefix("forum: line 1: chat needs a terminal"))
    #expect(!result.stderr.contains("line 2"), "\(result.stderr)")
    #expect(try forum.storedThreads().count == 1, "delete 1 ran as a command")
    #expect(result.stdout.contains("#1 "), "the line after /leave runs: \(result.stdout)")

    let untilTheEnd = try forum.script(["room 1", "delete 1 --yes"])
    #expect(untilTheEnd.status == 2)
    #expect(try forum.storedThreads().count == 1)
    #expect(try forum.script(["chat --help", "whoami"]).status == 0)
  }

  /// On SQLite a search is ranked while its words are in at most 2,000 posts, newest first
  /// beyond. Counting posts the searcher cannot read let a third person learn whether someone's
  /// private messages hold a word: post 2,000 comments holding it and see the order flip.
  @Test func theOrderOfASearchSaysNothingOfMessagesYouCannotRead() throws {
    let forum = try ForumFixture()
    let carol = try forum.openBoard(profile: "carol")
    let bob = try forum.openBoard(profile: "bob")
    let alice = try forum.openBoard(profile: "alice")
    try carol.createThread(title: "probe", description: "x", image: nil)
    // The oldest twenty are short (best by bm25), the newer ones long.
    for index in 1...2000 {
      try carol.addComment(
        to: 1,
        text: index <= 20 ? "zebrafish" : "zebrafish" + String(repeating: " filler", count: 30))
    }
    func firstPage() throws -> [String] {
      try forum.openBoard(profile: "carol").search(["zebrafish"]).items.map(\.ref)
    }
    let ranked = try firstPage()
    #expect(ranked.count == 20)
    try alice.sendMessage(to: bob.me.userName, text: "the zebrafish are in the shed")
    #expect(try firstPage() == ranked, "the order changed for a message carol cannot read")
  }
}
