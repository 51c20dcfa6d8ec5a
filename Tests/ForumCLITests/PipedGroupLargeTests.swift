import Foundation
import Testing

@testable import Datastore

/// One `CapturedOutput` for a whole group (`CommandLoop.runGroup`), each line given the bytes
/// written since the last. Lines that print much, fail, or leave a note, each in its place.
@Suite("a group's output held in streams opened once")
struct PipedGroupLargeTests {
  @Test func largeFailingAndNotedLinesEachKeepTheirOwnOutput() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    try forum.ok(["name", "Ken"], profile: "ken")
    try forum.ok(["name", "Ken"], profile: "otherken")
    var lines: [String] = []
    var expected: [String] = []
    for n in 1...40 {
      switch n % 5 {
      case 0:
        lines.append("comment 9 nowhere\(n)")
        expected.append("forum: line \(n): there is no thread #9")
      case 1:
        lines.append("comment 1 hi @Ken \(n)")
        expected.append("Posted")
        expected.append("forum: nobody was told of @Ken")
      default:
        let body = "m\(n)-" + String(repeating: "x\(n % 10)", count: 3000)
        lines.append("comment --json 1 \(body)")
        expected.append("{" + body)
      }
    }
    let result = try ForumFixture.launch(
      "/bin/sh",
      arguments: ["-c", "\"$0\" --db \"$1\" --profile alice 2>&1", forum.binary, forum.db],
      environment: forum.environment(),
      input: Data(lines.map { $0 + "\n" }.joined().utf8), timeout: 120)
    let out = result.stdoutLines
    #expect(out.count == expected.count, "\(out.count) lines")
    for (line, want) in zip(out, expected) {
      if want.hasPrefix("{") {
        #expect(
          line.hasPrefix("{") && line.contains("\"" + want.dropFirst() + "\""),
          "\(line.prefix(60)) vs \(want.prefix(20))")
      } else {
        #expect(line.hasPrefix(want), "\(line.prefix(80)) vs \(want)")
      }
    }
    #expect(try forum.storedComments(ofThread: 1).count == 32)
  }
}
