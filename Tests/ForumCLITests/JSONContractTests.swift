import Foundation
import Testing

/// Issue 21 #14: every command answers `--json` in JSON; errors keep the person's help; dates
/// are NCMB's everywhere (ISO `createDate`/`updateDate`, `{"__type":"Date","iso":…}` for the
/// rest); posts carry their author's `userName`.
@Suite("--json everywhere (pipes)")
struct JSONContractTests {
  private static let picture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/corpus/jpeg/testorig.jpg").path

  private static var iso: Regex<Substring> { #/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/# }

  /// `{"__type":"Date","iso":"…Z"}`.
  private func expectDate(
    _ value: Any?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let object = value as? [String: Any]
    #expect(
      object?["__type"] as? String == "Date", "\(what): \(String(describing: value))",
      sourceLocation: sourceLocation)
    let iso = object?["iso"] as? String ?? ""
    #expect(iso.wholeMatch(of: Self.iso) != nil, "\(what): \(iso)", sourceLocation: sourceLocation)
  }

  private func expectISO(
    _ value: Any?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let text = value as? String ?? ""
    #expect(
      text.wholeMatch(of: Self.iso) != nil, "\(what): \(String(describing: value))",
      sourceLocation: sourceLocation)
  }

  @Test func imageAndHelpAnswerInJSON() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "pic", "--image", Self.picture])
    let image = try forum.ok(["--json", "image", "1"])
    let object = try image.json()
    #expect(object.string("mimeType") == "image/jpeg", "\(image.summary)")
    #expect(object.int("width") == 227 && object.int("height") == 149, "\(image.summary)")
    #expect((object.int("fileSize") ?? 0) > 0)
    #expect(object.string("name")?.hasSuffix(".jpg") == true, "\(image.summary)")
    #expect(try forum.ok(["image", "1", "--json"]).json().string("mimeType") == "image/jpeg")

    let help = try forum.ok(["--json", "help"]).json()
    let commands = help.objects("results")
    #expect(commands.contains { $0.string("name") == "comment" }, "\(help)")
    #expect(commands.allSatisfy { $0.string("usage") != nil && $0.string("summary") != nil })
    let comment = try forum.ok(["--json", "help", "comment"]).json()
    #expect(comment.string("usage") == "comment [THREAD] [--edit] [TEXT]")
    #expect(comment.string("details")?.isEmpty == false)
    #expect(comment["aliases"] as? [String] == ["c"])
    let ja = try forum.run(["--json", "help", "comment"], lang: "ja_JP.UTF-8").json()
    #expect(ja.string("summary")?.contains("コメント") == true)
    let options = help.objects("options").compactMap { $0.string("name") }
    #expect(options.contains("--db") && options.contains("--json"), "\(help)")
    let initialized = try forum.run(
      ["--json", "init", "--db", forum.root + "/other.sqlite"], profile: nil, database: "")
    #expect(initialized.status == 0, "\(initialized.summary)")
    #expect(try initialized.json().string("message")?.isEmpty == false, "\(initialized.summary)")
  }

  @Test func errorsKeepThePersonsHelpBesideTheCode() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "mine"])
    let page = try forum.run(["--json", "list", "--page", "5"])
    #expect(page.status == 4)
    let error = try page.jsonError()
    #expect(error.string("code") == "E404001")
    #expect(error.string("detail")?.contains("list --page last") == true, "\(page.summary)")
    let delete = try forum.run(["--json", "delete", "1", "--yes"], profile: "bob")
    #expect(delete.status == 3)
    let refused = try delete.jsonError()
    #expect(refused.string("code") == "E403001")
    #expect(refused.string("detail")?.contains("moderators") == true, "\(delete.summary)")
  }

  @Test func datesAreNCMBsAndPostsCarryTheirAuthorsHandle() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")  // the first user owns the board
    let me = try forum.ok(["--json", "whoami"]).json().string("userName")
    try forum.ok(["new", "--title", "first", "--description", "d"])
    try forum.ok(["comment", "1", "hello"])
    try forum.ok(["comment", "1", "spam"])
    try forum.ok(["edit", "1/1", "hello again"])
    try forum.ok(["edit", "1", "--title", "renamed"])
    let mod = try forum.ok(["--json", "whoami"], profile: "mod").json().string("userName") ?? ""
    try forum.ok(["mod", "add", "@" + mod], profile: "owner")
    try forum.ok(["delete", "1/2", "--yes"], profile: "mod")
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName") ?? ""
    try forum.ok(["dm", "@" + bob, "hi bob"])

    let show = try forum.ok(["--json", "show", "1"]).json()
    let thread = try #require(show.object("thread"))
    expectISO(thread["createDate"], "thread createDate")
    expectISO(thread["updateDate"], "thread updateDate")
    expectDate(thread["lastActivity"], "thread lastActivity")
    expectDate(thread["editDate"], "thread editDate")
    #expect(thread.string("userName") == me, "\(thread)")
    let comments = show.objects("results")
    #expect(comments.count == 2)
    expectDate(comments.first?["editDate"], "comment editDate")
    expectDate(comments.last?["moderatedDate"], "comment moderatedDate")
    #expect(comments.allSatisfy { $0.string("userName") == me }, "\(comments)")

    let list = try forum.ok(["--json", "list"]).json().objects("results")
    expectDate(list.first?["lastActivity"], "list lastActivity")
    #expect(list.first?.string("userName") == me)
    let comment = try forum.ok(["--json", "comment", "1", "more"]).json()
    #expect(comment.string("userName") == me)
    expectISO(comment["createDate"], "comment createDate")
    let inbox = try forum.ok(["--json", "inbox"]).json().objects("results")
    expectDate(inbox.first?["lastActivity"], "conversation lastActivity")
    let history = try forum.ok(["--json", "history", "1/1"]).json().objects("results")
    #expect(history.count == 2)
    for revision in history { expectDate(revision["date"], "revision date") }
    let search = try forum.ok(["--json", "search", "again"]).json().objects("results")
    expectDate(search.first?["editDate"], "search result editDate")
    #expect(search.first?.string("userName") == me)
  }
}
