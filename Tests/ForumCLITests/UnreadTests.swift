import Foundation
import Testing

@testable import Datastore

/// Unread tracking through the binary: counts in `list` (own posts never count), `list --unread`,
/// `show` opening on the first unread page and marking it read, `unread`, `read --all`.
@Suite("unread")
struct UnreadTests {
  /// Alice's thread #1 with bob's two comments; bob's thread #2.
  private func seeded() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "alice's", "--description", "a"])
    try forum.ok(["comment", "1", "bob one"], profile: "bob")
    try forum.ok(["comment", "1", "bob two"], profile: "bob")
    try forum.ok(["new", "--title", "bob's"], profile: "bob")
    return forum
  }

  private func unread(_ forum: ForumFixture, _ profile: String) throws -> [Int: Int] {
    let list = try forum.ok(["--json", "list"], profile: profile).json()
    var counts: [Int: Int] = [:]
    for thread in list.objects("results") {
      counts[thread.int("number") ?? 0] = thread.int("unread")
    }
    return counts
  }

  @Test func listCountsOthersPostsOnlyAndJSONCarriesUnread() throws {
    let forum = try seeded()
    #expect(try unread(forum, "alice") == [1: 2, 2: 1])
    #expect(try unread(forum, "bob") == [1: 1, 2: 0], "bob's own posts never count")
    let lines = try forum.ok(["list"]).stdoutLines
    #expect(lines[0].hasPrefix("#2"))
    #expect(lines[0].contains("  +1    0  now"), "\(lines)")
    #expect(lines[1].contains("  +2    2  now"), "\(lines)")
  }

  @Test func showMarksWhatItShowedAsRead() throws {
    let forum = try seeded()
    try forum.ok(["show", "1"])
    #expect(try unread(forum, "alice") == [1: 0, 2: 1])
    #expect(try unread(forum, "bob") == [1: 1, 2: 0], "alice's reading is hers alone")
    try forum.ok(["comment", "1", "bob three"], profile: "bob")
    try forum.ok(["comment", "1", "alice's own"])
    #expect(try unread(forum, "alice")[1] == 1)
    let unreadOnly = try forum.ok(["--json", "list", "--unread"]).json()
    #expect(numbers(unreadOnly.objects("results")) == [1, 2])
    try forum.ok(["read", "--all"])
    #expect(try unread(forum, "alice") == [1: 0, 2: 0])
    #expect(try forum.ok(["list", "--unread"]).stdout == "No thread has unread posts.\n")
    #expect(try forum.ok(["unread"]).stdout == "Nothing unread.\n")
  }

  /// Re-reading a page already read writes nothing, so it waits for no writer: while another
  /// process holds the board's write lock, `show` of that page answers at once (it used to take
  /// the lock to record a position that did not move, and waited).
  @Test func rereadingAReadPageWaitsForNoWriter() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "long"])
    let seeded = try forum.script((1...25).map { "comment 1 c\($0)" }, profile: "bob")
    #expect(seeded.status == 0, "\(seeded.summary)")
    try forum.ok(["show", "1"])  // page 1: comments 1–20 read
    let store = try forum.openStore()
    let storage = try #require(store.engine as? SQLiteEngine)
    try storage.connection.execute("BEGIN IMMEDIATE")  // another writer holds the lock
    defer { try? storage.connection.execute("ROLLBACK") }
    for arguments in [["show", "1", "--page", "1"], ["--json", "show", "1", "--page", "1"]] {
      let again = try forum.run(arguments, timeout: 20)
      #expect(again.status == 0, "\(again.summary)")
      #expect(again.stdout.contains("c20"), "\(again.summary)")
      #expect(!again.stderr.contains("waiting"), "\(again.summary)")
    }
  }

  @Test func showOpensOnThePageOfTheFirstUnreadComment() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "long"])
    let first = try forum.script((1...25).map { "comment 1 c\($0)" }, profile: "bob")
    #expect(first.status == 0, "\(first.summary)")
    try forum.ok(["show", "1"])  // page 1: comments 1–20 read
    var shown = try forum.ok(["--json", "show", "1"]).json()
    #expect(numbers(shown.objects("results")).first == 21, "opens on page 2")
    let more = try forum.script((26...45).map { "comment 1 c\($0)" }, profile: "bob")
    #expect(more.status == 0, "\(more.summary)")
    shown = try forum.ok(["--json", "show", "1"]).json()
    #expect(numbers(shown.objects("results")).first == 21, "page 2 holds comment 26")
    shown = try forum.ok(["--json", "show", "1"]).json()
    #expect(numbers(shown.objects("results")).first == 41, "then page 3")
    // --page still shows what it is asked for.
    shown = try forum.ok(["--json", "show", "1", "--page", "1"]).json()
    #expect(numbers(shown.objects("results")).first == 1)
  }

  @Test func unreadJumpsToTheNextThreadWithUnreadPosts() throws {
    let forum = try seeded()
    let first = try forum.ok(["--json", "unread"]).json()
    #expect(first.object("thread")?.int("number") == 2)
    let second = try forum.ok(["--json", "unread"]).json()
    #expect(second.object("thread")?.int("number") == 1)
    #expect(numbers(second.objects("results")) == [1, 2])
    let none = try forum.ok(["unread"])
    #expect(none.stdout == "Nothing unread.\n")
    // `next` still pages.
    let script = try forum.script(["list", "next"])
    #expect(script.status == 4, "\(script.summary)")
  }

  @Test func readRefusesBadInput() throws {
    let forum = try seeded()
    let nothing = try forum.run(["read"])
    #expect(nothing.status == 2)
    #expect(nothing.stderrLines.count == 1)
    let both = try forum.run(["read", "--all", "1"])
    #expect(both.status == 2)
    let missing = try forum.run(["read", "9"])
    #expect(missing.status == 4)
    let bad = try forum.run(["read", "x"])
    #expect(bad.status == 2)
    #expect(try unread(forum, "alice") == [1: 2, 2: 1], "nothing was marked")
    try forum.ok(["read", "1"])
    #expect(try unread(forum, "alice") == [1: 0, 2: 1])
  }

  @Test func theInboxCountsThePartnersMessagesUntilTheConversationIsShown() throws {
    let forum = try ForumFixture()
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName") ?? ""
    let alice = try forum.ok(["--json", "whoami"]).json().string("userName") ?? ""
    try forum.ok(["dm", "@" + bob, "one"])
    try forum.ok(["dm", "@" + bob, "two"])
    try forum.ok(["dm", "@" + alice, "mine"], profile: "bob")
    func inboxUnread(_ profile: String) throws -> Int? {
      try forum.ok(["--json", "inbox"], profile: profile).json().objects("results").first?.int(
        "unread")
    }
    #expect(try inboxUnread("bob") == 2, "bob's own message never counts")
    #expect(try inboxUnread("alice") == 1)
    try forum.ok(["dm", "@" + alice], profile: "bob")
    #expect(try inboxUnread("bob") == 0)
    #expect(try inboxUnread("alice") == 1, "bob's reading is his alone")
  }
}
