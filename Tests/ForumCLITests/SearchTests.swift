import Foundation
import Testing

@testable import Datastore

/// `search` through the built binary: what it finds, its JSON, its filters and pages, and every
/// hostile query answered with results or one line, never an FTS error.
@Suite("search")
struct SearchTests {
  private func refs(_ result: RunResult) throws -> [String] {
    try result.json().objects("results").compactMap { $0.string("ref") }
  }

  @Test func findsTitlesDescriptionsAndCommentsWithRefsFieldsAndSnippets() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "Keyboard wanted", "--description", "a quiet one"])
    try forum.ok(["new", "--title", "Lunch", "--description", "Which KEYBOARD do you use?"])
    try forum.ok(["comment", "2", "mine is a loud keyboard from 1995"], profile: "bob")
    try forum.ok(["new", "--title", "nothing here"])

    let found = try forum.ok(["--json", "search", "keyboard"])
    let json = try found.json()
    let results = json.objects("results")
    #expect(Set(try refs(found)) == ["1", "2", "2/1"], "\(found.summary)")
    #expect(json.int("page") == 1)
    #expect(json["hasMore"] as? Bool == false)
    for result in results {
      switch result.string("ref") {
      case "1":
        #expect(result["matchedFields"] as? [String] == ["title"])
        #expect(result.string("type") == "thread")
        #expect(result.string("snippet")?.contains("Keyboard") == true)
        #expect(result.int("number") == 1)
      case "2":
        #expect(result["matchedFields"] as? [String] == ["description"])
        #expect(result.string("snippet")?.contains("KEYBOARD") == true)
      case "2/1":
        #expect(result["matchedFields"] as? [String] == ["text"])
        #expect(result.string("type") == "comment")
        #expect(result.int("threadNumber") == 2)
        #expect(result.string("text") == "mine is a loud keyboard from 1995")
      default: Issue.record("unexpected \(result)")
      }
    }
    // Every word must be in the post; words in different fields of a post are enough.
    #expect(try refs(forum.ok(["--json", "search", "keyboard", "quiet"])) == ["1"])
    #expect(try refs(forum.ok(["--json", "search", "keyboard", "lunch"])) == ["2"])
    // A quoted phrase is one word.
    #expect(try refs(forum.ok(["--json", "search", "loud keyboard"])) == ["2/1"])
    #expect(try refs(forum.ok(["--json", "search", "keyboard loud"])) == [])

    let text = try forum.ok(["search", "loud"]).stdoutLines
    #expect(text.count == 2, "\(text)")
    #expect(text.first?.hasPrefix("2/1  in #2 Lunch") == true, "\(text)")
    #expect(text.last?.contains("mine is a loud keyboard from 1995") == true, "\(text)")
    #expect(try forum.ok(["search", "absent"]).stdout == "No posts match.\n")
    #expect(try forum.ok(["--json", "search", "absent"]).stdout.contains("\"results\":[]"))
  }

  @Test func japaneseWordsOfOneTwoAndMoreCharacters() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "今日はいい天気ですね", "--description", "散歩に行きました"])
    try forum.ok(["new", "--title", "雨の日", "--description", "天ぷらを食べた"])
    try forum.ok(["comment", "2", "明日の天気は？"], profile: "bob")
    #expect(Set(try refs(forum.ok(["--json", "search", "天気"]))) == ["1", "2/1"])
    #expect(Set(try refs(forum.ok(["--json", "search", "天"]))) == ["1", "2", "2/1"])
    #expect(try refs(forum.ok(["--json", "search", "いい天気"])) == ["1"])
    #expect(try refs(forum.ok(["--json", "search", "天気", "散歩"])) == ["1"])
    let shown = try forum.run(["search", "天ぷら"], lang: "ja_JP.UTF-8")
    #expect(shown.status == 0, "\(shown.summary)")
    #expect(shown.stdout.contains("天ぷらを食べた"), "\(shown.summary)")
    #expect(try forum.run(["search", "無い"], lang: "ja_JP.UTF-8").stdout == "一致する投稿はありません。\n")
  }

  @Test func ftsSyntaxInAQueryIsText() throws {
    let forum = try ForumFixture()
    try forum.ok(
      [
        "new", "--title", "syntax", "--description",
        #"say "hi" a*b x-y col:on NEAR(p q) 50% a_b \z"#,
      ])
    try forum.ok(["new", "--title", "plain text"])
    for query in [
      #""hi""#, #"""#, "a*b", "*", "x-y", "col:on", ":", "NEAR(p q)", "NEAR", "50%", "a_b", #"\z"#,
      "(", ")", "AND", "OR", "NOT", "^", "{col}", "'", "''",
    ] {
      let result = try forum.run(["--json", "search", query])
      #expect(result.status == 0, "\(query): \(result.summary)")
      #expect(result.stderr.isEmpty, "\(query): \(result.summary)")
      let found = try refs(result)
      #expect(found.allSatisfy { $0 == "1" }, "\(query): \(found)")
    }
    for query in [#""hi""#, "a*b", "x-y", "col:on", "NEAR(p q)", "50%", "a_b", #"\z"#, "NEAR"] {
      #expect(try refs(forum.ok(["--json", "search", query])) == ["1"], "\(query)")
    }
    // % and _ are not wildcards.
    #expect(try refs(forum.ok(["--json", "search", "0%"])) == ["1"])
    #expect(try refs(forum.ok(["--json", "search", "a%b"])) == [])
    #expect(try refs(forum.ok(["--json", "search", "p_q"])) == [])
    // A word starting with - needs --; without, it is an unknown option (one line, exit 2).
    let dash = try forum.run(["search", "-y"])
    #expect(dash.status == 2 && dash.stderrLines.count == 1, "\(dash.summary)")
    #expect(try refs(forum.ok(["--json", "search", "--", "-y"])) == ["1"])
  }

  @Test func emptyHugeAndTooManyWordsAreOneLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "something"])
    let cases: [([String], Int32)] = [
      (["search"], 2), (["search", ""], 1), (["search", "   "], 1),
      (["search", String(repeating: "x", count: 5000)], 1),
      (["search", String(repeating: "天", count: 101)], 1),
      (["search"] + (1...17).map { "w\($0)" }, 2),
      (["search", "x", "--page", "0"], 2), (["search", "x", "--page", "abc"], 2),
      (["search", "x", "--thread", "abc"], 2), (["search", "x", "--author"], 2),
    ]
    for (arguments, status) in cases {
      let result = try forum.run(arguments)
      #expect(result.status == status, "\(result.summary)")
      #expect(result.stderrLines.count == 1, "\(result.summary)")
      #expect(result.stdout.isEmpty, "\(result.summary)")
      #expect(!result.stderr.lowercased().contains("fts"), "\(result.summary)")
    }
    let json = try forum.run(["--json", "search", String(repeating: "y", count: 2000)])
    #expect(try json.jsonError().string("code") == "E400002", "\(json.summary)")
    #expect(try forum.ok(["--json", "search", String(repeating: "z", count: 100)]).status == 0)
  }

  @Test func authorAndThreadNarrowAndMissingOnesAreNotFound() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "apple pie"])
    try forum.ok(["new", "--title", "apple tart"], profile: "bob")
    try forum.ok(["comment", "1", "apple crumble"], profile: "bob")
    try forum.ok(["comment", "2", "apple sauce"])
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName") ?? ""
    #expect(
      Set(try refs(forum.ok(["--json", "search", "apple", "--author", "@" + bob])))
        == ["2", "1/1"])
    #expect(
      Set(try refs(forum.ok(["--json", "search", "apple", "--author", bob]))) == ["2", "1/1"])
    #expect(
      Set(try refs(forum.ok(["--json", "search", "apple", "--thread", "1"]))) == ["1", "1/1"])
    #expect(
      try refs(forum.ok(["--json", "search", "apple", "--thread", "#2", "--author", "@" + bob]))
        == ["2"])
    let noThread = try forum.run(["search", "apple", "--thread", "9"])
    #expect(noThread.status == 4 && noThread.stderrLines.count == 1, "\(noThread.summary)")
    let noUser = try forum.run(["search", "apple", "--author", "@nobody"])
    #expect(noUser.status == 4 && noUser.stderrLines.count == 1, "\(noUser.summary)")
  }

  @Test func directMessagesAreFoundByTheirTwoMembersOnly() throws {
    let forum = try ForumFixture()
    var handles: [String: String] = [:]
    for person in ["alice", "bob", "carol"] {
      handles[person] = try forum.ok(["--json", "whoami"], profile: person).json().string(
        "userName")
    }
    try forum.ok(["dm", "@" + handles["bob"]!, "the walrus password is 天気"])
    try forum.ok(["dm", "@" + handles["alice"]!, "got the walrus"], profile: "bob")
    try forum.ok(["new", "--title", "public walrus"], profile: "carol")
    #expect(
      Set(try refs(forum.ok(["--json", "search", "walrus"])))
        == ["1", "@\(handles["bob"]!)/1", "@\(handles["bob"]!)/2"])
    #expect(
      Set(try refs(forum.ok(["--json", "search", "walrus"], profile: "bob")))
        == ["1", "@\(handles["alice"]!)/1", "@\(handles["alice"]!)/2"])
    #expect(try refs(forum.ok(["--json", "search", "walrus"], profile: "carol")) == ["1"])
    #expect(try refs(forum.ok(["--json", "search", "天気"], profile: "carol")) == [])
    #expect(try refs(forum.ok(["--json", "search", "walrus", "--thread", "1"])) == ["1"])
    let byBob = try forum.ok(["--json", "search", "walrus", "--author", handles["bob"]!])
    #expect(try refs(byBob) == ["@\(handles["bob"]!)/2"])
    #expect(try byBob.json().objects("results").first?.string("type") == "message")
    let text = try forum.ok(["search", "password"]).stdoutLines
    #expect(text.first?.contains("with @\(handles["bob"]!)") == true, "\(text)")
  }

  @Test func pagesOfTwentyAndPastTheEndIsNotFound() throws {
    let forum = try ForumFixture()
    let created = try forum.script((1...25).map { "new --title \"match \($0)\"" })
    #expect(created.status == 0, "\(created.summary)")
    let first = try forum.ok(["--json", "search", "match"]).json()
    #expect(first.objects("results").count == 20)
    #expect(first["hasMore"] as? Bool == true)
    let second = try forum.ok(["--json", "search", "match", "--page", "2"]).json()
    #expect(second.objects("results").count == 5)
    #expect(second["hasMore"] as? Bool == false)
    #expect(second.int("page") == 2)
    let all = (first.objects("results") + second.objects("results")).compactMap {
      $0.string("ref")
    }
    #expect(Set(all) == Set((1...25).map(String.init)) && all.count == 25)
    let text = try forum.ok(["search", "match"]).stdoutLines
    #expect(text.last == "page 1 — more: --page 2", "\(text)")
    let past = try forum.run(["search", "match", "--page", "3"])
    #expect(past.status == 4 && past.stderrLines.count == 1, "\(past.summary)")
  }

  @Test func snippetsAreSanitizedLikeAllDatabaseText() throws {
    let forum = try ForumFixture()
    let hostile =
      "before \u{1B}]0;pwned\u{07}\u{1B}[31mred\u{202E}evil\u{9B}2J needle after \u{1B}[0m"
    try forum.ok(["new", "--title", "t", "--description", "placeholder"])
    try forum.ok(["comment", "1", "placeholder"])
    // The board refuses control characters; a row written past it (an older forum, sqlite3)
    // still holds them.
    let store = try forum.openStore()
    let thread = try forum.storedThreads()[0]
    try store.master.update(
      "Thread", objectId: thread.objectId, set: ["description": .string(hostile)])
    let comment = try forum.storedComments()[0]
    try store.master.update(
      "Comment", objectId: comment.objectId, set: ["text": .string("x \u{1B}[2J needle \u{200B}")])
    let result = try forum.ok(["search", "needle"])
    #expect(result.stdout.contains("needle"), "\(result.summary)")
    #expect(result.stdoutLines.count == 4, "\(result.summary)")
    expectHarmless(result)
    let json = try forum.ok(["--json", "search", "needle"]).json().objects("results")
    #expect(json.contains { $0.string("description") == hostile })
  }

  @Test func theIndexFollowsWritesAndDeletes() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "walrus one"])
    try forum.ok(["comment", "1", "walrus two"])
    try forum.ok(["new", "--title", "walrus three"])
    try forum.ok(["comment", "2", "walrus four"])
    #expect(Set(try refs(forum.ok(["--json", "search", "walrus"]))) == ["1", "1/1", "2", "2/1"])
    try forum.ok(["delete", "1/1", "--yes"])
    #expect(Set(try refs(forum.ok(["--json", "search", "walrus"]))) == ["1", "2", "2/1"])
    // A thread takes its comments out of the index with it.
    try forum.ok(["delete", "2", "--yes"])
    #expect(try refs(forum.ok(["--json", "search", "walrus"])) == ["1"])
    // Comments bumping a thread's counters leave its index row as it was.
    try forum.ok(["comment", "1", "no match here"])
    #expect(try refs(forum.ok(["--json", "search", "walrus"])) == ["1"])
  }

  @Test func worksInScriptsAndAtTheSameLineEverywhere() throws {
    let forum = try ForumFixture()
    let result = try forum.script([
      "new --title \"otter notes\"", "search otter", "search --json otter", "search",
    ])
    #expect(result.status != 0, "the bare search is a usage error: \(result.summary)")
    #expect(result.stdout.contains("#1"), "\(result.summary)")
    #expect(result.stdout.contains("\"ref\":\"1\""), "\(result.summary)")
    #expect(result.stderrLines.count == 1, "\(result.summary)")
    #expect(result.stderr.contains("4"), "names the failing line: \(result.summary)")
    let help = try forum.ok(["help", "search"])
    #expect(help.stdout.contains("search WORDS [options]"), "\(help.summary)")
    #expect(help.stdout.contains("--author @handle"), "\(help.summary)")
  }

  @Test func aBoardFromBeforeSearchGetsItsIndexWhenOpened() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "heron before", "--description", "old board"])
    try forum.ok(["comment", "1", "heron comment"])
    // Make the file what an older forum left: schema 7, no index table, no triggers.
    do {
      let connection = try Connection(path: forum.db)
      let triggers = try connection.prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'search%'"
      ).rows { try $0.text(0) ?? "" }
      // Two a class, one insert trigger for all, and the queue's bound (issue 33).
      #expect(triggers.count == 8)
      for name in triggers { try connection.execute("DROP TRIGGER \(name)") }
      try connection.execute(
        """
        DROP TABLE search_text;
        DELETE FROM meta WHERE key = 'search';
        DROP TRIGGER objects_reading_delete;
        DROP TABLE read_positions;
        DROP TABLE revisions;
        DROP TRIGGER objects_shape_insert;
        DROP TRIGGER objects_shape_update;
        PRAGMA user_version = 7;
        """)
    }
    #expect(Set(try refs(forum.ok(["--json", "search", "heron"]))) == ["1", "1/1"])
    let connection = try Connection(path: forum.db)
    #expect(
      try connection.prepare("PRAGMA user_version").firstRow { $0.int(0) }
        == Int64(SQLiteSchema.migrations.steps.count))
  }
}

@Suite("search at the prompt")
struct SearchPromptTests {
  @Test func searchAtThePromptLooksEverywhereAndHighlightsTheMatch() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "otters", "--description", "the river otter swims"])
    try forum.ok(["new", "--title", "other"])
    try forum.ok(["comment", "2", "no otter here, says bob"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 2")
    try tmux.waitForPrompt("forum #2>")
    // Inside a thread the same line searches the whole board.
    try tmux.enter("search otter")
    let screen = try tmux.wait("results") { lines in
      lines.contains { $0.hasPrefix("#1 ") } && lines.contains { $0.hasPrefix("2/1 ") }
    }
    #expect(screen.contains { $0.contains("no otter here, says bob") }, "\(screen)")
    try tmux.waitForPrompt("forum #2>")
    let colored = try tmux.run(["capture-pane", "-p", "-e", "-t", tmux.target]).stdout
    #expect(
      colored.contains("\u{1B}[1m\u{1B}[4motter") || colored.contains("\u{1B}[1;4motter"),
      "the match is bold and underlined: \(colored.debugDescription.suffix(400))")
  }
}
