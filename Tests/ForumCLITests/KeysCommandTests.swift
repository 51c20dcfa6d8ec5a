import Foundation
import Testing

/// `forum keys`: the board's NCMB keys, made once and kept in the board, new ones on `--rotate`.
@Suite("forum keys")
struct KeysCommandTests {
  @Test func keysAreMadeOnceAndRotated() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let first = try forum.ok(["keys", "--json"], profile: nil).json()
    let application = try #require(first.string("applicationKey"))
    let client = try #require(first.string("clientKey"))
    #expect(application.count == 64 && client.count == 64 && application != client)
    #expect(application.allSatisfy { $0.isHexDigit && !$0.isUppercase })
    let again = try forum.ok(["keys", "--json"], profile: nil).json()
    #expect(again.string("applicationKey") == application)
    #expect(again.string("clientKey") == client)
    let plain = try forum.ok(["keys"], profile: nil)
    #expect(plain.stdout == "applicationKey: \(application)\nclientKey: \(client)\n")
    let rotated = try forum.ok(["keys", "--rotate", "--json"], profile: nil).json()
    #expect(rotated.string("applicationKey") != application)
    #expect(rotated.string("clientKey") != client)
    let after = try forum.ok(["keys", "--json"], profile: nil).json()
    #expect(after.string("clientKey") == rotated.string("clientKey"))
  }

  @Test(arguments: [["keys", "now"], ["keys", "--db"], ["keys", "--rotate=yes"]])
  func strayWordsAreUsageErrors(arguments: [String]) throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try Data(contentsOf: URL(fileURLWithPath: forum.db))
    let result = try forum.run(arguments, profile: nil)
    #expect(result.status == 2, "\(result.summary)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: forum.db)) == before)
  }
}
