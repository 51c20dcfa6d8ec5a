import Datastore
import Foundation
import PostgresTestCluster
import Testing

/// `edit`, `history` and `reply` through the binary, as two people.
@Suite("edit, history and reply")
struct EditAndReplyTests {
  private func seeded() throws -> ForumFixture {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "alice's", "--description", "first words"])
    try forum.ok(["comment", "1", "it's  \"quoted\" \\ kept"])
    try forum.ok(["comment", "1", "bob's comment"], profile: "bob")
    return forum
  }

  @Test func editACommentKeepsItsHistory() throws {
    let forum = try seeded()
    let edited = try forum.ok(["edit", "1/1", "now  'different'  text"])
    #expect(edited.stdout == "Edited 1/1.\n")
    let json = try forum.ok(["--json", "show", "1"], profile: "bob").json()
    let comment = json.objects("results")[0]
    #expect(comment.string("text") == "now  'different'  text")
    #expect(comment.object("editDate")?.string("__type") == "Date")
    #expect(json.objects("results")[1]["editDate"] == nil)
    let shown = try forum.ok(["show", "1"], profile: "bob").stdout
    #expect(shown.contains("(edited)"))

    let history = try forum.ok(["--json", "history", "1/1"], profile: "bob").json()
    let texts = history.objects("results").map { $0.string("text") }
    #expect(texts == ["it's  \"quoted\" \\ kept", "now  'different'  text"])
    #expect(history.objects("results").allSatisfy { $0.object("date")?.string("iso") != nil })
    let text = try forum.ok(["history", "1/1"]).stdoutLines
    #expect(text.first?.hasPrefix("revision 1 · ") == true)
    #expect(text.contains { $0.hasPrefix("revision 2 (current) · ") })
  }

  @Test func editAThreadsTitleAndDescription() throws {
    let forum = try seeded()
    try forum.ok(["edit", "1", "--title", "new title"])
    try forum.ok(["edit", "#1", "--description", "new words"])
    let thread = try forum.ok(["--json", "show", "1"]).json().object("thread")
    #expect(thread?.string("title") == "new title")
    #expect(thread?.string("description") == "new words")
    #expect(thread?["editDate"] != nil)
    let history = try forum.ok(["--json", "history", "1"]).json().objects("results")
    #expect(history.map { $0.string("title") } == ["alice's", "new title", "new title"])
    #expect(
      history.map { $0.string("description") } == ["first words", "first words", "new words"])
  }

  @Test func onlyTheAuthorEditsAndBadEditsChangeNothing() throws {
    let forum = try seeded()
    let before = try forum.storedComments()
    let other = try forum.run(["edit", "1/1", "hijack"], profile: "bob")
    #expect(other.status == 3)
    #expect(other.stderr.hasSuffix("(the author) may edit 1/1\n"), "\(other.summary)")
    let otherThread = try forum.run(["edit", "1", "--title", "hijack"], profile: "bob")
    #expect(otherThread.status == 3)
    let json = try forum.run(["--json", "edit", "1/1", "hijack"], profile: "bob")
    #expect(json.stderr.hasPrefix("{\"code\":\"E403001\",\"detail\":\"only "))
    #expect(
      json.stderr.hasSuffix(" (the author) may edit 1/1\",\"error\":\"No access with ACL.\"}\n"))
    let missing = try forum.run(["edit", "1/9", "x"])
    #expect(missing.status == 4)
    try forum.ok(["delete", "1/1", "--yes"])
    let deleted = try forum.run(["edit", "1/1", "x"])
    #expect(deleted.status == 4)
    let empty = try forum.run(["edit", "1/2", "   "], profile: "bob")
    #expect(empty.status != 0)
    let noFields = try forum.run(["edit", "1"])
    #expect(noFields.status == 2)
    let textForThread = try forum.run(["edit", "1", "some text"])
    #expect(textForThread.status == 2)
    let badReference = try forum.run(["edit", "1/x", "y"])
    #expect(badReference.status == 2)
    let tooLong = try forum.run(
      ["edit", "1/2", String(repeating: "x", count: 10_001)], profile: "bob")
    #expect(tooLong.status == 1)
    #expect(try forum.storedComments().map { $0["text"] } == before.dropFirst().map { $0["text"] })
  }

  @Test func aScriptEditsWithADraftAndItsLinesNeverRunAsCommands() throws {
    let forum = try seeded()
    let result = try forum.script(["edit 1/1", "line one", "delete 1 --yes", ".", "show 1"])
    #expect(result.status == 0, "\(result.summary)")
    let comment = try forum.ok(["--json", "show", "1"]).json().objects("results")[0]
    #expect(comment.string("text") == "line one\ndelete 1 --yes")
    let refused = try forum.script(["edit 1/1", "not bob's", ".", "list"], profile: "bob")
    #expect(refused.status != 0)
    #expect(try forum.storedThreads().count == 1)
  }

  @Test func replyQuotesTheCommentItAnswers() throws {
    let forum = try seeded()
    let posted = try forum.ok(["reply", "1/2", "I agree  with \"you\""])
    #expect(posted.stdout == "Posted 1/3.\n")
    let json = try forum.ok(["--json", "show", "1"], profile: "bob").json()
    let reply = json.objects("results")[2]
    #expect(reply.int("replyTo") == 2)
    #expect(reply.string("text") == "I agree  with \"you\"")
    let lines = try forum.ok(["show", "1"], profile: "bob").stdoutLines
    let quote = try #require(lines.firstIndex { $0.contains("> 2 ") })
    #expect(lines[quote].contains(": bob's comment"), "\(lines)")
    #expect(lines[quote + 1].contains("I agree  with \"you\""))
    let oneShotJSON = try forum.ok(["--json", "reply", "1/1", "ok"]).json()
    #expect(oneShotJSON.int("replyTo") == 1)
  }

  @Test func replyToAMissingCommentIsNotFoundAndPostsNothing() throws {
    let forum = try seeded()
    let missing = try forum.run(["reply", "1/9", "hello"])
    #expect(missing.status == 4)
    #expect(missing.stderr == "forum: there is no comment 1/9\n")
    let noThread = try forum.run(["reply", "7/1", "hello"])
    #expect(noThread.status == 4)
    let toThread = try forum.run(["reply", "1", "hello"])
    #expect(toThread.status == 2)
    let script = try forum.script(["reply 1/9", "draft line", "delete 1 --yes", "."])
    #expect(script.status == 4, "\(script.summary)")
    #expect(try forum.storedComments().count == 2)
    #expect(try forum.storedThreads().count == 1)
  }
}

/// `history` of a post edited many times is paged like `show` (issue 22): 20 a page, `--page N`,
/// `--page last`, a page past the end exits 4; the revisions the engine no longer keeps are one
/// line, and `--json` carries the paging fields.
@Suite("a long history")
struct LongHistoryTests {
  @Test func isPagedAndSaysWhatIsNotKept() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    try forum.ok(["comment", "1", "edit 0"])
    let edits = try forum.script((1...130).map { "edit 1/1 edit \($0)" })
    #expect(edits.status == 0, "\(edits.summary)")
    let first = try forum.ok(["history", "1/1"], profile: "bob").stdoutLines
    #expect(first.count < 50, "one page: \(first.count) lines")
    #expect(first.first?.hasPrefix("revision 1 ·") == true, "\(first)")
    #expect(first.contains("(revisions 2–31 not kept)"), "\(first)")
    #expect(first.contains { $0.hasPrefix("revision 32 ·") }, "\(first)")
    #expect(first.last == "page 1/6 — more: history 1/1 --page 2", "\(first)")
    let last = try forum.ok(["history", "1/1", "--page", "last"], profile: "bob").stdoutLines
    #expect(last.first?.hasPrefix("revision 131 (current) ·") == true, "\(last)")
    #expect(last.last == "page 6/6", "\(last)")
    let past = try forum.run(["history", "1/1", "--page", "7"], profile: "bob")
    #expect(past.status == 4 && past.stderr.contains("history 1/1 --page 6"), "\(past.summary)")
    let json = try forum.ok(["--json", "history", "1/1", "--page", "2"], profile: "bob").json()
    #expect(json["page"] as? Int == 2 && json["hasMore"] as? Bool == true, "\(json)")
    #expect(json.objects("results").compactMap { $0["revision"] as? Int } == Array(51...70))
    let japanese = try forum.run(["history", "1/1"], profile: "bob", lang: JapaneseTests.ja)
    #expect(japanese.stdout.contains("(版 2–31 は残っていません)"), "\(japanese.summary)")
    // The engine keeps the first and the latest 99 of them, whoever edits.
    let kept = try ForumFixture.launch(
      "/usr/bin/sqlite3", arguments: [forum.db, "SELECT count(*) FROM revisions"],
      environment: forum.environment(), input: Data(), timeout: 60)
    #expect(kept.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "100")
  }

  /// Issue 22: a member with psql edits a comment 150 times (each text may be a megabyte: the
  /// server's cap on a value; 10 kB here keeps the test quick). The server keeps the first and
  /// the latest 99 revisions, as for an edit through forum, and the member cannot write or drop
  /// revisions by hand.
  @Test func postgresKeepsTheLimitAgainstPsql() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board()
    defer { board.remove() }
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    for member in ["alice", "bob"] {
      try board.cluster.admin("GRANT forum_member TO \(board[member].name)")
    }
    let alice = board["alice"].uri
    #expect(try forum.run(["new", "--title", "t"], profile: "alice", database: alice).status == 0)
    #expect(
      try forum.run(["comment", "1", "edit 0"], profile: "alice", database: alice).status == 0)
    func psql(_ sql: String) throws -> RunResult {
      try ForumFixture.launch(
        board.cluster.binaries + "/psql",
        arguments: ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", alice, "-c", sql],
        environment: forum.environment(), input: Data(), timeout: 300)
    }
    let edits = try psql(
      """
      DO $$ BEGIN
        FOR i IN 1..150 LOOP
          UPDATE forum.objects SET data = data || jsonb_build_object('text',
            'edit ' || i || ' ' || repeat('x', 10000))
          WHERE class = 'Comment';
        END LOOP;
      END $$
      """)
    #expect(edits.status == 0, "\(edits.summary)")
    let totals = try board.cluster.admin(
      "SELECT count(*) || ' ' || max(number) FROM forum.revisions", database: board.database)
    #expect(totals.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Revision.kept) 150")
    // No way around the trigger: revisions are written by the server only.
    for sql in [
      "INSERT INTO forum.revisions(object_id, date, data, number) VALUES ('x', 0, '{}', 1)",
      "DELETE FROM forum.revisions", "UPDATE forum.revisions SET number = 1",
      "ALTER TABLE forum.objects DISABLE TRIGGER USER",
    ] {
      let refused = try psql(sql)
      #expect(refused.status != 0, "\(sql): \(refused.summary)")
    }
    #expect(
      try board.cluster.admin("SELECT count(*) FROM forum.revisions", database: board.database)
        .trimmingCharacters(in: .whitespacesAndNewlines) == "\(Revision.kept)")
  }
}
