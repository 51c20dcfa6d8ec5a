import Datastore
import Foundation
import Testing

/// Issue 21, "who is here": a newcomer learns everyone's handle; handles are understood in any
/// case, and `@Name` when exactly one person has that name.
@Suite("who and loose handles (pipes)")
struct WhoTests {
  private func handle(_ forum: ForumFixture, _ profile: String) throws -> String {
    try forum.ok(["--json", "whoami"], profile: profile).json().string("userName") ?? ""
  }

  @Test func whoListsEveryoneWithTheirHandleNewestFirst() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Owner"], profile: "owner")  // the first user owns the board
    try forum.ok(["name", "Aiko"])
    try forum.ok(["name", "Ken"], profile: "ken")
    try forum.ok(["new", "--title", "hello"], profile: "ken")
    let ken = try handle(forum, "ken")
    let aiko = try handle(forum, "alice")
    let owner = try handle(forum, "owner")
    try forum.ok(["mod", "add", "@" + ken], profile: "owner")

    let text = try forum.ok(["who"]).stdoutLines
    #expect(text.count == 3, "no header in a pipe: \(text)")
    #expect(text.first?.hasPrefix("Ken ") == true, "Ken posted last: \(text)")
    #expect(text.first?.contains("@" + ken) == true)
    #expect(text.first?.contains("moderator") == false, "only the owner sees roles: \(text)")
    #expect(text.contains { $0.hasPrefix("Aiko (you)") && $0.contains("@" + aiko) }, "\(text)")
    #expect(text.contains { $0.hasPrefix("Owner") && $0.contains("@" + owner) }, "\(text)")
    let seenByOwner = try forum.ok(["who"], profile: "owner").stdoutLines
    #expect(seenByOwner.first?.hasSuffix("moderator") == true, "\(seenByOwner)")

    let json = try forum.ok(["--json", "who"]).json().objects("results")
    #expect(json.map { $0.string("userName") ?? "" }.first == ken)
    #expect(json.allSatisfy { ($0.object("lastActive")?.string("__type")) == "Date" })
    #expect(json.allSatisfy { ($0["moderator"] as? Bool) != true }, "roles are the owner's")
    #expect(try forum.ok(["members"]).stdoutLines == text)

    let japanese = try forum.run(["help", "who"], lang: "ja_JP.UTF-8")
    #expect(japanese.stdout.contains("ハンドル"), "\(japanese.summary)")
    #expect(try forum.ok(["help"]).stdout.contains("who"))
  }

  @Test func handlesInAnyCaseAndUniqueNamesReachThePerson() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Aiko"])
    try forum.ok(["name", "Ken"], profile: "ken")
    try forum.ok(["name", "Ken"], profile: "ken2")
    try forum.ok(["name", "Bob"], profile: "bob")
    let bob = try handle(forum, "bob")
    let upper = try forum.ok(["dm", "@" + bob.uppercased(), "case"])
    #expect(upper.stdout == "Sent to @\(bob) (message 1).\n", "\(upper.summary)")
    let lower = try forum.ok(["dm", "@" + bob.lowercased(), "again"])
    #expect(lower.stdout == "Sent to @\(bob) (message 2).\n")
    let byName = try forum.ok(["dm", "@bob", "by name"])
    #expect(byName.stdout == "Sent to @\(bob) (message 3).\n", "\(byName.summary)")
    let twoKens = try forum.run(["dm", "@Ken", "which one?"])
    #expect(twoKens.status == 4, "two people are called Ken: \(twoKens.summary)")
    let kens = try [handle(forum, "ken"), handle(forum, "ken2")].sorted()
    #expect(
      twoKens.stderr == "forum: 2 people are called Ken; say which by handle: "
        + kens.map { "@" + $0 }.joined(separator: ", ") + "\n", "\(twoKens.summary)")
  }

  /// Issue 28: a name many people took (1,200 here, past one listing of users) still says it is
  /// ambiguous and names a few of them, rather than finding nobody; `who` says how many it
  /// leaves out.
  @Test func aNameManyTookIsAmbiguousNotNobody() throws {
    let forum = try ForumFixture()
    try forum.ok(["name", "Carol"], profile: "carol")
    let store = try forum.openStore()
    for _ in 0..<1200 {
      let login = try store.loginAnonymously(secret: Datastore.newSecret())
      _ = try store.client(login).setDisplayName("Alice")
    }
    let dm = try forum.run(["dm", "@Alice", "hi"], profile: "carol")
    #expect(dm.status == 4, "\(dm.summary)")
    #expect(
      dm.stderr.hasPrefix("forum: 1200 people are called Alice; say which by handle: @"),
      "\(dm.summary)")
    #expect(dm.stderr.hasSuffix(", … and 1195 more\n"), "\(dm.summary)")
    let who = try forum.ok(["who"], profile: "carol").stdoutLines
    #expect(who.count == 1001, "\(who.count) lines")
    #expect(
      who.last == "Showing 1000 of 1201 people (the first 1000 by handle).", "\(who.last ?? "")")
  }
}
