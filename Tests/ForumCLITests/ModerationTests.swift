import Foundation
import Spawning
import Testing

/// Moderation through the binary: the owner (the board's first user on SQLite) chooses
/// moderators; they take down others' public posts, leaving a tombstone.
@Suite("moderation")
struct ModerationTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    let me = try forum.ok(["--json", "whoami"], profile: profile).json()
    return "@" + (me.string("userName") ?? "")
  }

  private func seeded() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")  // the first user owns the board
    try forum.ok(["new", "--title", "spam", "--description", "buy now"])
    try forum.ok(["comment", "1", "more spam"])
    try forum.ok(["list"], profile: "mod")
    return forum
  }

  @Test func onlyTheOwnerChoosesModerators() throws {
    let forum = try seeded()
    let mod = try handle(forum, "mod")
    let refused = try forum.run(["mod", "add", mod], profile: "alice")
    #expect(refused.status == 3)
    #expect(refused.stderr == "forum: only the board's owner may choose moderators\n")
    #expect(try forum.run(["mod", "list"], profile: "alice").status == 3)
    #expect(try forum.ok(["mod", "list"], profile: "owner").stdout == "No moderators.\n")
    let added = try forum.ok(["mod", "add", mod], profile: "owner")
    #expect(added.stdout == "\(mod) is now a moderator.\n")
    let list = try forum.ok(["--json", "mod", "list"], profile: "owner").json()
    #expect(list.objects("results").map { "@" + ($0.string("userName") ?? "") } == [mod])
    #expect(try forum.run(["mod", "add", "@nobody1234"], profile: "owner").status == 4)
    #expect(try forum.run(["mod", "promote", mod], profile: "owner").status == 2)
    #expect(try forum.run(["mod"], profile: "owner").status == 2)
    try forum.ok(["mod", "remove", mod], profile: "owner")
    #expect(try forum.ok(["mod", "list"], profile: "owner").stdout == "No moderators.\n")
  }

  @Test func aModeratorDeletesOthersPostsLeavingATombstone() throws {
    let forum = try seeded()
    let before = try forum.run(["delete", "1/1", "--yes"], profile: "mod")
    #expect(before.status == 3)
    #expect(before.stderr.hasSuffix("(the author) and moderators may delete 1/1\n"))
    try forum.ok(["mod", "add", try handle(forum, "mod")], profile: "owner")
    let deleted = try forum.ok(["delete", "1/1", "--yes"], profile: "mod")
    #expect(deleted.stdout == "Deleted 1/1 as a moderator; a tombstone stays.\n")
    let shown = try forum.ok(["show", "1"], profile: "bob")
    #expect(shown.stdout.contains("(deleted by a moderator "))
    #expect(!shown.stdout.contains("more spam"))
    let json = try forum.ok(["--json", "show", "1"], profile: "bob").json()
    let comment = json.objects("results")[0]
    #expect(comment["text"] == nil && comment["moderatedDate"] != nil)
    #expect(try forum.storedComments().first?["text"] == nil, "the content is gone")
    #expect(try forum.run(["edit", "1/1", "back"]).status == 4)
    #expect(try forum.run(["history", "1/1"]).status == 4)

    try forum.ok(["delete", "1", "--yes"], profile: "mod")
    let list = try forum.ok(["list"], profile: "bob").stdout
    #expect(list.contains("(deleted by a moderator)") && !list.contains("spam"))
    #expect(try forum.run(["delete", "1", "--yes"], profile: "mod").status == 4)
  }

  @Test func aRoleChangeCountsFromTheNextCommandOfARunningSession() throws {
    let forum = try seeded()
    let mod = try handle(forum, "mod")
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: forum.binary)
    process.arguments = ["--db", forum.db, "--profile", "mod"]
    process.environment = forum.environment()
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    input.fileHandleForWriting.write(Data("delete 1/1 --yes\n".utf8))
    // The refusal of the first line, before the role is granted.
    let refusal = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
    #expect(refusal.contains("moderators may delete 1/1"), "\(refusal)")
    try forum.ok(["mod", "add", mod], profile: "owner")
    input.fileHandleForWriting.write(Data("delete 1/1 --yes\n".utf8))
    try input.fileHandleForWriting.close()
    let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(stdout == "Deleted 1/1 as a moderator; a tombstone stays.\n")
  }
}
