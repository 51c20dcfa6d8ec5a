import Foundation
import Testing

/// The command line contract of DESIGN §3: help, version, exit statuses, JSON, scripts.
@Suite("command line contract")
struct CommandLineTests {
  @Test func versionAndHelp() throws {
    let forum = try ForumFixture()
    let version = try forum.ok(["--version"])
    #expect(version.stdout == "forum 0.1.0\n")

    let help = try forum.ok(["help"])
    let lines = help.stdoutLines
    #expect(lines.first == "Commands:")
    for word in [
      "list", "show", "new", "comment", "delete", "image", "whoami", "name", "help", "quit",
    ] {
      #expect(lines.contains { $0.hasPrefix("  \(word)") }, "help lists \(word)")
    }
    let flag = try forum.ok(["--help"])
    #expect(flag.stdout.hasPrefix("usage: forum "))
    #expect(flag.stdout.contains("Commands:"))

    let delete = try forum.ok(["help", "delete"])
    #expect(delete.stdoutLines.first == "usage: delete THREAD | THREAD/COMMENT [--yes]")
    #expect(delete.stdout.contains("--yes"))
    let commandHelp = try forum.ok(["new", "--help"])
    #expect(
      commandHelp.stdoutLines.first
        == "usage: new [--title T] [--description D] [--image PATH] [--edit]")
    #expect(try forum.storedThreads().isEmpty)
  }

  @Test(arguments: [
    ("lsit", "list"), ("shwo", "show"), ("delet", "delete"), ("hepl", "help"), ("whomai", "whoami"),
  ])
  func unknownCommandSuggestsTheNearest(typed: String, suggested: String) throws {
    let forum = try ForumFixture()
    let result = try forum.run([typed])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr
        == "forum: unknown command '\(typed)'. Did you mean '\(suggested)'? Type 'help' for the list.\n"
    )
  }

  @Test func unknownCommandFarFromAnyGetsNoSuggestion() throws {
    let forum = try ForumFixture()
    let result = try forum.run(["xyzzyplugh"])
    #expect(result.status == 2)
    #expect(result.stderr == "forum: unknown command 'xyzzyplugh'. Type 'help' for the list.\n")
    let help = try forum.run(["help", "nothing"])
    #expect(help.status == 2)
  }

  /// 0 done, 1 failed, 2 usage error, 3 permission refused, 4 not found.
  @Test func exitStatuses() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "alice's"])
    let cases: [(arguments: [String], profile: String, status: Int32)] = [
      (["list"], "alice", 0),
      (["show", "1"], "bob", 0),
      (["new", "--title", String(repeating: "x", count: 201)], "alice", 1),
      (["comment", "1", " "], "alice", 1),
      (["name", " "], "alice", 1),
      (["frobnicate"], "alice", 2),
      (["--frobnicate", "list"], "alice", 2),
      (["list", "--frobnicate"], "alice", 2),
      (["show", "1", "2"], "alice", 2),
      (["new", "--title"], "alice", 2),
      (["list", "--page", "x"], "alice", 2),
      (["comment", "1", "'unclosed"], "alice", 0),  // the shell already split the words
      (["delete", "1", "--yes"], "bob", 3),
      (["show", "2"], "alice", 4),
      (["delete", "1/5", "--yes"], "alice", 4),
      (["image", "1"], "alice", 4),
    ]
    for item in cases {
      let result = try forum.run(item.arguments, profile: item.profile)
      #expect(result.status == item.status, "\(result.summary)")
      if item.status != 0 {
        #expect(result.stderrLines.count == 1, "one line on stderr: \(result.summary)")
        #expect(result.stderr.hasPrefix("forum: "))
        #expect(!result.stderr.contains("Fatal error"))
      }
    }
    #expect(try forum.storedThreads().count == 1)
  }

  @Test func jsonOutputsTheBackendsShapes() throws {
    let forum = try ForumFixture()
    let new = try forum.ok(["--json", "new", "--title", "T", "--description", "D"]).json()
    #expect(new.int("number") == 1)
    #expect(new.string("title") == "T")
    #expect(new.string("description") == "D")
    #expect(new.int("commentCount") == 0)
    #expect(new.string("objectId")?.count == 16)
    #expect(new.string("createDate")?.hasSuffix("Z") == true)
    #expect(new.string("updateDate") != nil)
    #expect(new["lastCommentNumber"] == nil)
    let acl = try #require(new.object("acl"))
    #expect((acl["*"] as? [String: Any])?["read"] as? Bool == true)
    let me = try forum.ok(["--json", "whoami"]).json()
    let owner = try #require(me.string("objectId"))
    #expect((acl[owner] as? [String: Any])?["write"] as? Bool == true)
    #expect(new.string("displayName") == me.string("displayName"))

    let comment = try forum.ok(["--json", "comment", "1", "hi"], profile: "bob").json()
    #expect(comment.int("number") == 1)
    #expect(comment.string("text") == "hi")
    let pointer = try #require(comment.object("thread"))
    #expect(pointer.string("__type") == "Pointer")
    #expect(pointer.string("className") == "Thread")
    #expect(pointer.string("objectId") == new.string("objectId"))
    #expect(comment.string("displayName")?.isEmpty == false)

    let list = try forum.ok(["--json", "list"]).json()
    #expect(Set(list.keys) == ["results", "page", "hasMore"])
    #expect(list.objects("results").first?.int("commentCount") == 1)

    let show = try forum.ok(["show", "1", "--json"]).json()
    #expect(Set(show.keys) == ["thread", "results", "page", "hasMore", "count"])
    #expect(show.int("count") == 1)
    #expect(show.object("thread")?.string("objectId") == new.string("objectId"))
    #expect(show.objects("results").first?.string("text") == "hi")

    let missing = try forum.run(["--json", "show", "5"])
    #expect(missing.status == 4)
    #expect(missing.stdout.isEmpty)
    #expect(
      missing.stderr
        == "{\"code\":\"E404001\",\"detail\":\"there is no thread #5\",\"error\":\"No data available.\"}\n"
    )

    let tooLong = try forum.run(["--json", "new", "--title", String(repeating: "t", count: 201)])
    #expect(tooLong.status == 1)
    #expect(
      tooLong.stderr
        == "{\"code\":\"E400002\",\"detail\":\"The title is 201 characters; the limit is 200\",\"error\":\"title is invalid.\"}\n"
    )

    let empty = try forum.run(["--json", "comment", "1", "  "])
    #expect(empty.status == 1)
    #expect(
      empty.stderr
        == "{\"code\":\"E400003\",\"detail\":\"The comment is empty.\",\"error\":\"text is empty.\"}\n"
    )
  }

  /// `--json` given after the command word applies to that command's errors too.
  @Test func perCommandJSONFlagAppliesToErrors() throws {
    let forum = try ForumFixture()
    let missing = try forum.run(["show", "5", "--json"])
    #expect(missing.status == 4)
    #expect(
      missing.stderr
        == "{\"code\":\"E404001\",\"detail\":\"there is no thread #5\",\"error\":\"No data available.\"}\n"
    )
  }

  @Test func scriptsReportTheFailingLineAndKeepGoing() throws {
    let forum = try ForumFixture()
    let result = try forum.script([
      "# a comment line",
      "new --title first",
      "show 42",
      "",
      "new --title \"unclosed",
      "frob",
      "new --title second",
      "list",
    ])
    #expect(result.status == 4, "the first failure's status: \(result.summary)")
    #expect(result.stderrLines.count == 3)
    #expect(
      result.stderrLines.prefix(2) == [
        "forum: line 3: there is no thread #42",
        "forum: line 5: unclosed quote",
      ])
    #expect(result.stderrLines.last?.hasPrefix("forum: line 6: unknown command 'frob'.") == true)
    #expect(result.stdoutLines.prefix(2) == ["Posted #1.", "Posted #2."])
    #expect(try forum.storedThreads().map { $0["title"] } == [.string("first"), .string("second")])

    let json = try forum.script(["show 42", "list"], arguments: ["--json"])
    #expect(json.status == 4)
    #expect(
      json.stderr
        == "{\"code\":\"E404001\",\"detail\":\"there is no thread #42\",\"error\":\"No data available.\",\"line\":1}\n"
    )

    let quit = try forum.script(["new --title a", "quit", "new --title never"])
    #expect(quit.status == 0)
    #expect(try forum.storedThreads().count == 3)

    let clean = try forum.script(["list", "whoami"])
    #expect(clean.status == 0)
    #expect(clean.stderr.isEmpty)
  }

  @Test func whoamiNeverShowsTheSessionToken() throws {
    let forum = try ForumFixture()
    let text = try forum.ok(["whoami"])
    let json = try forum.ok(["--json", "whoami"])
    let me = try json.json()
    #expect(Set(me.keys).isSuperset(of: ["objectId", "userName", "displayName"]))
    #expect(me["sessionToken"] == nil)
    #expect(me["authData"] == nil)
    #expect(me.string("userName")?.count == 10)
    #expect(text.stdout.contains("user id:  \(me.string("objectId") ?? "?")"))
    #expect(text.stdout.contains("profile:  alice"))

    let profile = try Data(
      contentsOf: URL(fileURLWithPath: forum.profilesDirectory + "/alice.json"))
    let stored = try #require(try JSONSerialization.jsonObject(with: profile) as? [String: Any])
    let sessions = try #require(stored["sessions"] as? [String: String])
    let tokens = Array(sessions.values)
    #expect(!tokens.isEmpty)
    for token in tokens {
      for result in [text, json] {
        #expect(!result.stdout.contains(token))
        #expect(!result.stderr.contains(token))
      }
    }
    #expect(!json.stdout.contains(stored["uuid"] as? String ?? "?"))
    // The profile file is private.
    let mode =
      try FileManager.default.attributesOfItem(
        atPath: forum.profilesDirectory + "/alice.json")[.posixPermissions] as? Int
    #expect(mode == 0o600)

    // Two profiles are two users; the same profile is the same user every time.
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json()
    #expect(bob.string("objectId") != me.string("objectId"))
    let again = try forum.ok(["--json", "whoami"]).json()
    #expect(again.string("objectId") == me.string("objectId"))
  }

  @Test func nameChangesTheDisplayNameShownInTheList() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "mine"])
    let renamed = try forum.ok(["name", "Alice", "L."])
    #expect(renamed.stdout == "You are now Alice L..\n")
    let list = try forum.ok(["list"], profile: "bob").stdoutLines
    #expect(list.first?.contains(" Alice L.     ") == true)
    #expect(try forum.ok(["show", "1"], profile: "bob").stdout.contains("by Alice L. · posted"))
    let me = try forum.ok(["--json", "whoami"]).json()
    #expect(me.string("displayName") == "Alice L.")
    #expect(me.string("userName") != "Alice L.")
    // The author column grows with the names where there is room (at 80 columns, 23 cells);
    // past that a name is cut, and shown whole by `show`.
    try forum.ok(["name", "Alice", "Liddell", "of", "Oxford"])
    #expect(try forum.ok(["list"]).stdoutLines.first?.contains(" Alice Liddell of Oxford ") == true)
    try forum.ok(["name", "Alice", "Liddell", "of", "Oxford", "and", "Wonderland"])
    #expect(try forum.ok(["list"]).stdoutLines.first?.contains(" Alice Liddell of Oxfor… ") == true)
    #expect(
      try forum.ok(["show", "1"]).stdout.contains("by Alice Liddell of Oxford and Wonderland (you)")
    )

    let forty = String(repeating: "n", count: 40)
    try forum.ok(["name", forty])
    let tooLong = try forum.run(["name", forty + "n"])
    #expect(tooLong.status == 1)
    #expect(tooLong.stderrLines.count == 1)
    let blank = try forum.run(["name", "   "])
    #expect(blank.status == 1)
    #expect(blank.stderr == "forum: The name is empty.\n")
    let missing = try forum.run(["name"])
    #expect(missing.status == 2)
    #expect(try forum.ok(["--json", "whoami"]).json().string("displayName") == forty)
  }

  @Test func helpAndMistypedCommandsNeedNoDatabase() throws {
    let forum = try ForumFixture()
    let unusable = forum.root + "/missing-directory/board.sqlite"
    let env = forum.environment()
    let help = try ForumFixture.launch(
      forum.binary, arguments: ["--db", unusable, "help"], environment: env, input: Data(),
      timeout: 60)
    #expect(help.status == 0)
    #expect(help.stdout.contains("Commands:"))
    let topic = try ForumFixture.launch(
      forum.binary, arguments: ["--db", unusable, "delete", "--help"], environment: env,
      input: Data(), timeout: 60)
    #expect(topic.status == 0)
    #expect(topic.stdout.hasPrefix("usage: delete"))
    let typo = try ForumFixture.launch(
      forum.binary, arguments: ["--db", unusable, "lsit"], environment: env, input: Data(),
      timeout: 60)
    #expect(typo.status == 2)
    #expect(typo.stderr.contains("Did you mean 'list'?"))
    #expect(!FileManager.default.fileExists(atPath: forum.profilesDirectory))
  }
}
