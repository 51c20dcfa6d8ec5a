import Foundation
import Testing

@testable import Datastore

/// A member with `sqlite3` can write any number into a thread's counters (README, trust model).
/// Whoever then opens the thread must get a page or one clear line, never a crash.
@Suite("a thread whose counters were written by hand")
struct HostileCounterTests {
  @Test(
    arguments: ["commentCount", "lastCommentNumber"], [Int64.max, Int64.max - 5, -1])
  func aHugeOrNegativeCounterIsNoCrash(_ field: String, _ count: Int64) throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t", "--description", "d"])
    try forum.ok(["comment", "1", "first"], profile: "bob")
    do {
      let connection = try Connection(path: forum.db)
      try connection.run(
        "UPDATE objects SET data = json_set(data, '$.' || ?, ?) WHERE class = 'Thread'",
        [.text(field), .integer(count)])
    }
    for command in [["show", "1"], ["show", "1", "--page", "last"], ["list"], ["unread"]] {
      let result = try forum.run(command, profile: "carol")
      // A page, or one line saying why not. A trap (SIGILL is 4, like "not found") says nothing.
      if result.status != 0 {
        #expect(
          result.stderrLines.count == 1 && result.stderr.hasPrefix("forum: "), "\(result.summary)")
      }
      #expect(!result.stderr.contains("crash"), "\(result.summary)")
    }
  }
}
