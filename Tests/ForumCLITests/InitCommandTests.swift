import Foundation
import Testing

/// `forum init --db LOCATION`: the exact line every "no forum schema" error tells the owner to run.
@Suite("forum init")
struct InitCommandTests {
  @Test("`init --db PATH` initialises PATH, never the default board")
  func dbAfterInitNamesTheBoard() throws {
    let forum = try ForumFixture()
    let target = forum.root + "/named.sqlite"
    let result = try forum.run(["init", "--db", target], profile: nil, database: "")
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdout.contains(target), "\(result.summary)")
    #expect(FileManager.default.fileExists(atPath: target), "\(result.summary)")
    let defaultBoard = forum.root + "/data/forum/forum.sqlite"
    #expect(!FileManager.default.fileExists(atPath: defaultBoard), "the default board was made")
    let equals = try forum.run(["init", "--db=" + target], profile: nil, database: "")
    #expect(equals.status == 0, "\(equals.summary)")
    #expect(equals.stdout.contains(target), "\(equals.summary)")
  }

  @Test(
    "init refuses words it does not take, and a --db without a value, touching nothing",
    arguments: [
      ["init", "now"], ["init", "--db"], ["init", "--db", "--json"], ["init", "--yes"],
    ])
  func strayWordsAreUsageErrors(arguments: [String]) throws {
    let forum = try ForumFixture()
    let result = try forum.run(arguments, profile: nil, database: "")
    #expect(result.status == 2, "\(result.summary)")
    #expect(result.stderrLines.count == 1, "\(result.summary)")
    let defaultBoard = forum.root + "/data/forum/forum.sqlite"
    #expect(!FileManager.default.fileExists(atPath: defaultBoard), "the default board was made")
  }
}
