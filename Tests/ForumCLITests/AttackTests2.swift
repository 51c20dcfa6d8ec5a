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
}
