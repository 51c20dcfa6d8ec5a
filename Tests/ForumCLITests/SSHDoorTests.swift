import Foundation
import Spawning
import Testing

/// The ssh door through a real OpenSSH server (`SSHDoorFixture`): keys are members, one-shot
/// commands come from the client's command line, and nothing but forum runs.
@Suite("ssh door", .serialized, .timeLimit(.minutes(3)))
struct SSHDoorTests {
  @Test("each key is a member: one-shot commands, the same key the same member, JSON")
  func keysAreMembers() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    let posted = try door.ssh(alice, ["new", "--title", "Hello", "--description", "first"])
    #expect(posted.status == 0, "\(posted.summary)\n\(door.sshdLog)")
    #expect(posted.stdout.contains("Posted #1."), "\(posted.summary)")
    let aliceMe = try door.ssh(alice, ["--json", "whoami"]).json()["objectId"] as? String
    let aliceAgain = try door.ssh(alice, ["--json", "whoami"]).json()["objectId"] as? String
    let bobMe = try door.ssh(bob, ["--json", "whoami"]).json()["objectId"] as? String
    #expect(aliceMe != nil && aliceMe == aliceAgain)
    #expect(bobMe != nil && bobMe != aliceMe)
    // `comment 1 TEXT` over ssh arrives as one line; the text is taken as typed.
    let comment = try door.ssh(bob, ["comment", "1", "hello from bob"])
    #expect(comment.status == 0, "\(comment.summary)")
    let shown = try door.ssh(alice, ["--json", "show", "1"])
    #expect(shown.status == 0, "\(shown.summary)")
    #expect(shown.stdout.contains("hello from bob"), "\(shown.summary)")
    // Another key's post cannot be deleted.
    let delete = try door.ssh(bob, ["delete", "1", "--yes"])
    #expect(delete.status == 3, "\(delete.summary)")
    #expect(try door.ssh(alice, ["list"]).stdout.contains("Hello"))
    // The members live in the door's state, by fingerprint.
    let fingerprint = try door.fingerprint(alice)
    let name = "key-" + fingerprint.dropFirst(7).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }
    #expect(FileManager.default.fileExists(atPath: door.state + "/keys/" + String(name)))
  }

  @Test("on a PostgreSQL board the door's role acts for each key: two keys are two members")
  func postgresBoard() throws {
    let door = try SSHDoorFixture(postgres: true)
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    let posted = try door.ssh(alice, ["new", "--title", "Hello", "--description", "first"])
    #expect(posted.status == 0, "\(posted.summary)\n\(door.sshdLog)")
    #expect(posted.stdout.contains("Posted #1."), "\(posted.summary)")
    let aliceMe = try door.ssh(alice, ["--json", "whoami"]).json()["objectId"] as? String
    let aliceAgain = try door.ssh(alice, ["--json", "whoami"]).json()["objectId"] as? String
    let bobMe = try door.ssh(bob, ["--json", "whoami"]).json()["objectId"] as? String
    #expect(aliceMe != nil && aliceMe == aliceAgain)
    #expect(bobMe != nil && bobMe != aliceMe)
    let comment = try door.ssh(bob, ["comment", "1", "hello from bob"])
    #expect(comment.status == 0, "\(comment.summary)")
    let shown = try door.ssh(alice, ["--json", "show", "1"])
    #expect(shown.status == 0, "\(shown.summary)")
    #expect(shown.stdout.contains("hello from bob"), "\(shown.summary)")
    // Row-level security holds for the key's member: another key's post cannot be deleted.
    let delete = try door.ssh(bob, ["delete", "1", "--yes"])
    #expect(delete.status == 3, "\(delete.summary)")
    #expect(try door.ssh(alice, ["list"]).stdout.contains("Hello"))
    // The two keys are two app users of the board, not the door's role itself.
    let board = try #require(door.postgresBoard)
    let identities = try board.cluster.admin(
      "SELECT count(*) FROM forum.app_identities", database: board.database)
    #expect(identities.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
  }

  @Test("a shell, sftp, a forward, an environment variable or another identity get only forum")
  func nothingButForum() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    #expect(try door.ssh(alice, ["new", "--title", "Mine", "--description", "x"]).status == 0)
    let shell = try door.ssh(bob, ["/bin/sh", "-c", "id"])
    #expect(shell.status != 0 && !shell.stdout.contains("uid="), "\(shell.summary)")
    #expect(shell.stderr.contains("forum: "), "\(shell.summary)")
    let sftp = try door.ssh(bob, ["sftp"], options: ["-s"])
    #expect(sftp.status != 0 && sftp.stdout.isEmpty, "\(sftp.summary)")
    let remote = try door.ssh(
      bob, ["list"], options: ["-o", "ExitOnForwardFailure=yes", "-R", "0:127.0.0.1:\(door.port)"])
    #expect(remote.status != 0, "\(remote.summary)")
    #expect(!remote.stdout.contains("Mine"), "a remote forward was allowed: \(remote.summary)")
    // A local forward (-L) opens a direct-tcpip channel, as -W does: refused.
    let direct = try door.ssh(bob, [], options: ["-W", "127.0.0.1:\(door.port)"])
    #expect(direct.status != 0 && !direct.stdout.contains("SSH-2.0"), "\(direct.summary)")
    // A variable the client sends is not taken: the board stays the door's.
    let other = door.directory + "/other.sqlite"
    let env = try door.ssh(
      bob, ["list"], options: ["-o", "SetEnv=FORUM_DB=\(other) FORUM_PROFILE=x"])
    #expect(env.status == 0 && env.stdout.contains("Mine"), "\(env.summary)")
    #expect(!FileManager.default.fileExists(atPath: other))
    // A command line naming another board or identity is refused in one line.
    let aliceName = "key-" + (try door.fingerprint(alice)).dropFirst(7)
    for words in [
      ["--profile", String(aliceName), "delete", "1", "--yes"], ["--db", other, "list"],
      ["ssh-session", "--db", other, "--key", try door.fingerprint(alice)],
      ["new", "--title", "T", "--image", "/etc/shadow"],
    ] {
      let refused = try door.ssh(bob, words)
      #expect(refused.status == 2, "\(refused.summary)")
      #expect(refused.stderrLines.count == 1, "\(refused.summary)")
    }
    #expect(try door.ssh(alice, ["list"]).stdout.contains("Mine"))
    #expect(!FileManager.default.fileExists(atPath: other))
  }

  @Test("a moderator bans a key: one line and out, no write on any path; posts stay; unban")
  func bannedKey() throws {
    let door = try SSHDoorFixture()
    let owner = try door.makeKey("owner")
    let carol = try door.makeKey("carol")
    let bob = try door.makeKey("bob")
    let rules = try door.ssh(owner, ["new", "--title", "Rules", "--description", "'be kind'"])
    #expect(rules.status == 0, "\(rules.summary)\n\(door.sshdLog)")
    // The board's owner is its first user, on the host: it appoints a key's member.
    let appointed = try door.asOwner(["mod", "add", try door.handle(carol)])
    #expect(appointed.status == 0, "\(appointed.summary)")
    let ownerHandle = try door.asOwner(["--json", "whoami"]).json()["userName"] as? String
    try checkBan(door, moderator: carol, owner: "@" + (ownerHandle ?? ""), bob: bob)
  }

  @Test("on PostgreSQL a moderator (an app user) bans a key through the same rules")
  func bannedKeyOnPostgres() throws {
    let door = try SSHDoorFixture(postgres: true)
    let owner = try door.makeKey("owner")
    let carol = try door.makeKey("carol")
    let bob = try door.makeKey("bob")
    let rules = try door.ssh(owner, ["new", "--title", "Rules", "--description", "'be kind'"])
    #expect(rules.status == 0, "\(rules.summary)\n\(door.sshdLog)")
    // The board's owner is the database's: it appoints a key's member as a moderator.
    let board = try #require(door.postgresBoard)
    let appointed = try door.forum.run(
      ["mod", "add", try door.handle(carol)], profile: "owner", database: board.owner.uri)
    #expect(appointed.status == 0, "\(appointed.summary)")
    try checkBan(door, moderator: carol, owner: nil, bob: bob)
  }

  /// `moderator` bans `bob` by key and by handle; `owner` (the SQLite board's owner's handle)
  /// may not be banned.
  private func checkBan(
    _ door: SSHDoorFixture, moderator: String, owner: String?, bob: String
  ) throws {
    let spam = try door.ssh(bob, ["comment", "1", "spam"])
    #expect(spam.status == 0, "\(spam.summary)")
    let notModerator = try door.ssh(bob, ["mod", "ban-key", try door.fingerprint(moderator)])
    #expect(
      notModerator.status == 3 && notModerator.stderrLines.count == 1, "\(notModerator.summary)")
    let ban = try door.ssh(moderator, ["mod", "ban-key", try door.fingerprint(bob)])
    #expect(ban.status == 0, "\(ban.summary)")
    let oneLine = ["forum: this key is banned from the board."]
    let refused = try door.ssh(bob, ["list"])
    #expect(refused.status == 3, "\(refused.summary)")
    #expect(refused.stdout.isEmpty && refused.stderrLines == oneLine, "\(refused.summary)")
    let write = try door.ssh(bob, ["comment", "1", "more spam"])
    #expect(write.status == 3 && write.stderrLines == oneLine, "\(write.summary)")
    // Around the door, as the door's user with the key's own profile: the board refuses.
    let around = try door.direct(bob, ["comment", "1", "spam around the door"])
    #expect(around.status == 3, "\(around.summary)")
    #expect(around.stderr.contains("banned"), "\(around.summary)")
    let shown = try door.ssh(moderator, ["show", "1"])
    #expect(
      shown.stdout.contains("spam") && !shown.stdout.contains("more spam"), "\(shown.summary)")
    #expect(!shown.stdout.contains("around the door"), "\(shown.summary)")
    // Unban restores, at the door and around it.
    let unban = try door.ssh(moderator, ["mod", "unban-key", try door.fingerprint(bob)])
    #expect(unban.status == 0, "\(unban.summary)")
    #expect(try door.ssh(bob, ["list"]).status == 0)
    let back = try door.ssh(bob, ["comment", "1", "sorry"])
    #expect(back.status == 0, "\(back.summary)")
    // By the member's handle.
    let byHandle = try door.ssh(moderator, ["mod", "ban-key", try door.handle(bob)])
    #expect(byHandle.status == 0, "\(byHandle.summary)")
    #expect(try door.ssh(bob, ["list"]).stderrLines == oneLine)
    // Nobody bans the owner; nobody bans themself.
    if let owner {
      let theOwner = try door.ssh(moderator, ["mod", "ban-key", owner])
      #expect(theOwner.status == 3 && theOwner.stderrLines.count == 1, "\(theOwner.summary)")
      #expect(try door.asOwner(["comment", "1", "still here"]).status == 0)
    }
    let own = try door.ssh(moderator, ["mod", "ban-key", try door.fingerprint(moderator)])
    #expect(own.status == 2 && own.stderrLines.count == 1, "\(own.summary)")
  }

  @Test("a picture piped in is checked as a file is, and shown to another member")
  func imageFromStandardInput() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    let png = try Data(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fixtures/corpus/png/suite/basn2c08.png").standardized)
    let posted = try door.ssh(alice, ["new", "--title", "Picture", "--image", "-"], input: png)
    #expect(posted.status == 0, "\(posted.summary)")
    let shown = try door.ssh(bob, ["--images", "blocks", "show", "1"])
    #expect(shown.stdout.contains("▀") && shown.stdout.contains("32×32 PNG"), "\(shown.summary)")
    let text = try door.ssh(
      alice, ["new", "--title", "Bad", "--image", "-"], input: Data("hi".utf8))
    #expect(text.status != 0 && text.stderrLines.count == 1, "\(text.summary)")
    #expect(try door.ssh(bob, ["--json", "list"]).stdout.contains("Bad") == false)
  }

  /// On an SQLite board nobody has opened, the first key is turned away in one line and no
  /// member is made: the board's first user is its owner, and a stranger at the door would have
  /// owned it (appointed moderators, banned the owner). Once the owner has opened it, keys come
  /// in as members, and none may do the owner's part.
  @Test("a board its owner has not opened lets no key in: the first user is the owner's")
  func noStrangerOwnsTheBoard() throws {
    let door = try SSHDoorFixture(ownerlessBoard: true)
    let stranger = try door.makeKey("stranger")
    let refused = try door.ssh(stranger, ["mod", "add", "@anyone"])
    #expect(
      refused.status == 1 && refused.stdout.isEmpty
        && refused.stderrLines == [
          "forum: this board has no owner yet: its owner opens it once with forum on its host "
            + "first (a board's first user is its owner)"
        ], "\(refused.summary)")
    let member = door.state + "/keys/" + (try door.memberName(stranger)) + "/member"
    #expect(!FileManager.default.fileExists(atPath: member), "no member was made for the key")
    #expect(try door.asOwner(["whoami"]).status == 0)
    #expect(try door.ssh(stranger, ["list"]).status == 0)
    let notOwner = try door.ssh(stranger, ["mod", "add", try door.handle(stranger)])
    #expect(notOwner.status == 3 && notOwner.stderrLines.count == 1, "\(notOwner.summary)")
  }

  @Test("the board's posting budget, set by its owner: a key past it gets one line, no other")
  func postingBudget() throws {
    let door = try SSHDoorFixture()
    let owner = try door.makeKey("owner")
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    #expect(try door.ssh(owner, ["new", "--title", "One", "--description", "x"]).status == 0)
    // Only the owner and moderators set it; everyone reads it.
    let notYours = try door.ssh(alice, ["mod", "posts-per-minute", "1"])
    #expect(notYours.status == 3 && notYours.stderrLines.count == 1, "\(notYours.summary)")
    let set = try door.asOwner(["mod", "posts-per-minute", "2"])
    #expect(set.status == 0, "\(set.summary)")
    let read = try door.ssh(alice, ["--json", "mod", "posts-per-minute"])
    #expect(try read.json()["postsPerMinute"] as? Int == 2, "\(read.summary)")
    let bad = try door.asOwner(["mod", "posts-per-minute", "-3"])
    #expect(bad.status == 2 && bad.stderrLines.count == 1, "\(bad.summary)")
    #expect(try door.ssh(alice, ["comment", "1", "one"]).status == 0)
    #expect(try door.ssh(alice, ["comment", "1", "two"]).status == 0)
    let third = try door.ssh(alice, ["comment", "1", "three"])
    #expect(third.status == 3 && third.stderrLines.count == 1, "\(third.summary)")
    #expect(third.stderr.contains("2 times a minute"), "\(third.summary)")
    // An edit is written and kept as a post is: past the budget it is refused alike (30 edits
    // of 10,000 characters went through in 8 seconds, every revision kept).
    let edit = try door.ssh(alice, ["edit", "1/1", "'one, edited'"])
    #expect(
      edit.status == 3 && edit.stderrLines.count == 1 && edit.stderr.contains("2 times a minute"),
      "\(edit.summary)")
    #expect(!(try door.ssh(bob, ["show", "1"]).stdout.contains("one, edited")))
    #expect(!(try door.ssh(bob, ["show", "1"]).stdout.contains("three")))
    // Another key is not slowed by alice's budget.
    #expect(try door.ssh(bob, ["comment", "1", "bob is not limited by alice"]).status == 0)
    #expect(try door.ssh(bob, ["comment", "1", "nor now"]).status == 0)
    // The setting is the board's: cleared, the door's default (10) holds again.
    #expect(try door.asOwner(["mod", "posts-per-minute", "off"]).status == 0)
    #expect(try door.ssh(alice, ["comment", "1", "three again"]).status == 0)
  }

  @Test("the client's LANG is honoured when sent; nothing else from its environment")
  func clientLanguage() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let japanese = try door.ssh(
      alice, ["list"], options: ["-o", "SendEnv=LANG"], environment: ["LANG": "ja_JP.UTF-8"])
    #expect(japanese.stdout.contains("掲示板はまだ空です"), "\(japanese.summary)")
    let english = try door.ssh(alice, ["list"])
    #expect(english.stdout.contains("The board is empty"), "\(english.summary)")
  }

  @Test("a fingerprint or key text with odd characters is refused in one line, nothing made")
  func oddFingerprints() throws {
    let forum = try ForumFixture()
    let state = forum.root + "/door"
    for key in [
      "SHA256:../../../etc/passwd", "SHA256:" + String(repeating: "A", count: 42) + "$",
      "MD5:aa:bb", "",
    ] {
      let session = try ForumFixture.launch(
        forum.binary, arguments: ["ssh-session", "--db", forum.db, "--key", key, "--state", state],
        environment: forum.environment(), input: Data(), timeout: 60)
      #expect(session.status == 2 && session.stderrLines.count == 1, "\(session.summary)")
      let keys = try ForumFixture.launch(
        forum.binary,
        arguments: [
          "ssh-keys", "--db", forum.db, "--fingerprint", key, "--type", "ssh-ed25519", "--key",
          "AAAA",
        ], environment: forum.environment(), input: Data(), timeout: 60)
      #expect(keys.status == 2 && keys.stdout.isEmpty, "\(keys.summary)")
    }
    let good = "SHA256:" + String(repeating: "A", count: 43)
    let badType = try ForumFixture.launch(
      forum.binary,
      arguments: [
        "ssh-keys", "--db", forum.db, "--fingerprint", good, "--type", "ssh-ed25519\" x",
        "--key", "AAAA",
      ], environment: forum.environment(), input: Data(), timeout: 60)
    #expect(badType.status == 2 && badType.stdout.isEmpty, "\(badType.summary)")
    let line = try ForumFixture.launch(
      forum.binary,
      arguments: [
        "ssh-keys", "--db", forum.db, "--fingerprint", good, "--type", "ssh-ed25519", "--key",
        "AAAA",
      ], environment: forum.environment(), input: Data(), timeout: 60)
    #expect(line.stdout.hasPrefix("restrict,pty,command=\""), "\(line.summary)")
    #expect(line.stdout.contains("--key \(good)\" ssh-ed25519 AAAA"), "\(line.summary)")
    #expect(!FileManager.default.fileExists(atPath: state))
    #expect(!FileManager.default.fileExists(atPath: forum.db))
  }

  @Test("a PostgreSQL location is quoted into the forced command; quotes or a password refused")
  func postgresLocationQuoted() throws {
    let forum = try ForumFixture()
    let good = "SHA256:" + String(repeating: "A", count: 43)
    func keys(_ location: String) throws -> RunResult {
      try ForumFixture.launch(
        forum.binary,
        arguments: [
          "ssh-keys", "--db", location, "--fingerprint", good, "--type", "ssh-ed25519", "--key",
          "AAAA", "--forum", "/usr/bin/forum",
        ], environment: forum.environment(), input: Data(), timeout: 60)
    }
    let uri = "postgresql:///board?host=/run/postgresql&port=5432"
    let line = try keys(uri)
    #expect(line.status == 0, "\(line.summary)")
    #expect(
      line.stdout.hasPrefix(
        "restrict,pty,command=\"/usr/bin/forum ssh-session --db '\(uri)' --key \(good)\""),
      "\(line.summary)")
    let setup = try ForumFixture.launch(
      forum.binary, arguments: ["ssh-setup", "--db", uri, "--user", "board"],
      environment: forum.environment(), input: Data(), timeout: 60)
    #expect(setup.status == 0, "\(setup.summary)")
    #expect(setup.stdout.contains("--db '\(uri)' --fingerprint \"$1\""), "\(setup.summary)")
    #expect(setup.stdout.contains("IN ROLE forum_member, forum_server"), "\(setup.summary)")
    for bad in [
      uri + "&user=x'$(id)'", uri + "&options=\"-c", "postgresql://board:secret@localhost/board",
      uri + "&password=secret", "postgresql:///board?host=/run/my socket",
    ] {
      let refused = try keys(bad)
      #expect(refused.status == 2 && refused.stdout.isEmpty, "\(refused.summary)")
      #expect(refused.stderrLines.count == 1, "\(refused.summary)")
      #expect(!refused.stderr.contains("secret"), "\(refused.summary)")
    }
  }

  @Test("a board the door's user cannot write: one clear line")
  func unwritableBoard() throws {
    let door = try SSHDoorFixture(boardOwnedByRoot: true)
    let alice = try door.makeKey("alice")
    let result = try door.ssh(alice, ["list"])
    #expect(result.status == 1 && result.stderrLines.count == 1, "\(result.summary)")
    #expect(result.stderr.contains("cannot write the board"), "\(result.summary)")
  }
}

/// The door's prompt in a real terminal: `ssh -t` in tmux.
@Suite(
  "ssh door at the prompt", .serialized, .timeLimit(.minutes(3)))
struct SSHDoorTerminalTests {
  func prompt(_ door: SSHDoorFixture, _ key: String, term: String = "screen") throws -> TmuxSession
  {
    try TmuxSession(
      forum: door.forum, profile: "unused", environment: ["TERM": term],
      command: ["/usr/bin/ssh", "-t"] + door.sshArguments(key))
  }

  @Test("first visit asks a name; a post by one key appears live on the other's screen")
  func liveAcrossKeys() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    #expect(try door.ssh(alice, ["new", "--title", "Welcome", "--description", "hi"]).status == 0)
    let tmux = try prompt(door, bob)
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("Your display name:")
    try tmux.enter("Bob Door")
    try tmux.waitForPrompt("forum>")
    #expect(try tmux.screen().contains { $0.contains("Bob Door") })
    #expect(
      try door.ssh(alice, ["new", "--title", "'Live from alice'", "--description", "x"]).status == 0
    )
    try tmux.wait("alice's thread on bob's screen") {
      $0.contains { $0.contains("Live from alice") }
    }
    // A window of 1×1 and a storm of resizes: the prompt is still there, the board unharmed.
    for (columns, rows) in [(1, 1), (200, 60), (2, 3), (40, 10), (1, 1), (100, 30)] {
      try tmux.run(["resize-window", "-t", tmux.target, "-x", String(columns), "-y", String(rows)])
    }
    try tmux.enter("whoami")
    try tmux.wait("whoami after the resizes") {
      $0.contains { $0.contains("@") } && $0.last == "forum>"
    }
    // The same key next time: no question, the same name.
    try tmux.enter("quit")
    _ = try tmux.waitForExit()
    let again = try door.ssh(bob, ["whoami"])
    #expect(again.stdout.contains("Bob Door"), "\(again.summary)")
  }

  @Test("on PostgreSQL: the first visit asks a name; another key's post appears live")
  func liveOnPostgres() throws {
    let door = try SSHDoorFixture(postgres: true)
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    #expect(try door.ssh(alice, ["new", "--title", "Welcome", "--description", "hi"]).status == 0)
    let tmux = try prompt(door, bob)
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("Your display name:")
    try tmux.enter("Bob Door")
    try tmux.waitForPrompt("forum>")
    #expect(
      try door.ssh(alice, ["new", "--title", "'Live from alice'", "--description", "x"]).status == 0
    )
    try tmux.wait("alice's thread on bob's screen") {
      $0.contains { $0.contains("Live from alice") }
    }
    try tmux.enter("quit")
    _ = try tmux.waitForExit()
    let again = try door.ssh(bob, ["whoami"])
    #expect(again.stdout.contains("Bob Door"), "\(again.summary)")
  }

  @Test("a disconnect in the middle of a post keeps the draft for that key alone")
  func disconnectKeepsDraft() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    #expect(try door.ssh(alice, ["new", "--title", "Topic", "--description", "x"]).status == 0)
    #expect(try door.ssh(bob, ["name", "Bob"]).status == 0)
    do {
      let tmux = try prompt(door, bob, term: "weird;term$(id)")
      defer { _ = try? tmux.run(["kill-server"]) }
      try tmux.waitForPrompt("forum>")
      try tmux.enter("comment 1")
      try tmux.waitForPrompt(">")
      try tmux.enter("half of what bob meant")
      // The line reached the door (echoed, and the next line asked for) before the cut.
      try tmux.wait("the line echoed") { lines in
        lines.contains { $0.contains("half of what bob meant") } && lines.last == ">"
      }
      // ssh's escape after a newline: ~. drops the connection at once.
      try tmux.type("~.")
      try tmux.wait("ssh to end") { $0.contains { $0.contains("[forum exited with") } }
    }
    let bobDrafts =
      door.state + "/keys/key-"
      + (try door.fingerprint(bob)).dropFirst(7).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }
      + "/state/forum/drafts"
    let deadline = Date().addingTimeInterval(10)
    var kept = ""
    while Date() < deadline {
      kept = (try? allText(under: String(bobDrafts))) ?? ""
      if kept.contains("half of what bob meant") { break }
      usleep(50_000)
    }
    #expect(kept.contains("half of what bob meant"), "drafts: \(kept)")
    // The door's side ends when sshd sees the client gone; the next visit starts after it.
    let bobKey = try door.fingerprint(bob)
    while Date() < deadline.addingTimeInterval(10) {
      let running = try ForumFixture.launch(
        "/usr/bin/pgrep", arguments: ["-f", "--", "--key " + bobKey], environment: [:],
        input: Data(), timeout: 10)
      if running.status != 0 { break }
      usleep(50_000)
    }
    #expect(!(try door.ssh(alice, ["show", "1"]).stdout.contains("half of what")))
    let tmux = try prompt(door, bob)
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("comment 1")
    try tmux.wait("the kept draft") { $0.contains { $0.contains("half of what bob meant") } }
  }

  @Test("a terminal that speaks kitty graphics gets the picture as kitty escapes over ssh")
  func kittyGraphicsOverSSH() throws {
    let door = try SSHDoorFixture()
    let alice = try door.makeKey("alice")
    let bob = try door.makeKey("bob")
    let png = try Data(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fixtures/corpus/png/suite/basn2c08.png").standardized)
    let posted = try door.ssh(alice, ["new", "--title", "Picture", "--image", "-"], input: png)
    #expect(posted.status == 0, "\(posted.summary)")
    #expect(try door.ssh(bob, ["name", "Bob"]).status == 0)
    // The terminal says what it is in TERM, which ssh carries to the door as the local prompt
    // reads it (`ImageMode.renderMode`): kitty's own name, then a plain xterm.
    for (term, kitty) in [("xterm-kitty", true), ("xterm-256color", false)] {
      let tmux = try TmuxSession(
        forum: door.forum, profile: "unused",
        command: ["/usr/bin/env", "TERM=\(term)", "/usr/bin/ssh", "-t"] + door.sshArguments(bob))
      defer { _ = try? tmux.run(["kill-server"]) }
      // Everything the client's terminal is sent, escapes and all (tmux itself draws no
      // kitty images, so its screen cannot show them).
      let log = door.forum.root + "/pane-\(term).log"
      try tmux.run(["resize-window", "-t", tmux.target, "-x", "120", "-y", "60"])
      try tmux.run(["pipe-pane", "-t", tmux.target, "-o", "cat >> \(log)"])
      try tmux.waitForPrompt("forum>")
      try tmux.enter("show 1")
      try tmux.wait("the thread on the screen (\(term))") {
        $0.contains { $0.contains("32×32 PNG") }
      }
      var sent = ""
      let deadline = Date().addingTimeInterval(10)
      repeat {
        sent = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        if sent.contains("32×32 PNG") { break }
        usleep(50_000)
      } while Date() < deadline
      let escape = "\u{1B}_Ga=T,f=100,q=2"
      if kitty {
        #expect(sent.contains(escape), "no kitty graphics reached the client: \(sent.suffix(400))")
        #expect(sent.contains("\u{1B}\\"), "the kitty escape was not closed")
        #expect(!(try tmux.screen()).contains { $0.contains("▀") })
      } else {
        #expect(!sent.contains("\u{1B}_G"), "kitty escapes sent to a plain xterm")
        #expect(try tmux.screen().contains { $0.contains("▀") }, "no half-blocks")
      }
      try tmux.enter("quit")
    }
  }

  private func allText(under directory: String) throws -> String {
    var text = ""
    let enumerator = FileManager.default.enumerator(atPath: directory)
    while let name = enumerator?.nextObject() as? String {
      text += (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
    }
    return text
  }
}

/// A key flood at the door: new keys from one address are held to a budget (5 an hour by
/// default), counted under a lock in the door's state; known keys are never held by it.
@Suite("ssh door key flood", .serialized, .timeLimit(.minutes(5)))
struct SSHDoorKeyFloodTests {
  /// The board's members, as `who --json` lists them (through a known key).
  private func members(_ door: SSHDoorFixture, _ key: String) throws -> Int {
    let result = try door.ssh(key, ["--json", "who"])
    guard let count = try result.json()["count"] as? Int else {
      throw ForumTestError("who: \(result.summary)")
    }
    return count
  }

  private func memberFile(_ door: SSHDoorFixture, _ key: String) throws -> String {
    door.state + "/keys/" + (try door.memberName(key)) + "/member"
  }

  @Test("7 fresh keys from one address: the 6th and 7th refused in one line, no member made")
  func newKeysPerAddress() throws {
    let door = try SSHDoorFixture()
    let keys = try (1...7).map { try door.makeKey("flood\($0)") }
    for key in keys.prefix(5) {
      let result = try door.ssh(key, ["whoami"])
      #expect(result.status == 0, "\(result.summary)\n\(door.sshdLog)")
    }
    // The five keys' members and the board's owner.
    #expect(try members(door, keys[0]) == 6)
    for key in keys.suffix(2) {
      let refused = try door.ssh(key, ["new", "--title", "Flood", "--description", "x"])
      #expect(refused.status == 3, "\(refused.summary)")
      #expect(
        refused.stderrLines == ["forum: too many new keys from this address; try again later."],
        "\(refused.summary)")
      #expect(!FileManager.default.fileExists(atPath: try memberFile(door, key)))
    }
    #expect(try members(door, keys[0]) == 6)
    #expect(!(try door.ssh(keys[0], ["list"]).stdout.contains("Flood")))
    // Keys already known are never held by the budget.
    for key in keys.prefix(5) {
      let again = try door.ssh(key, ["whoami"])
      #expect(again.status == 0, "\(again.summary)")
    }
  }

  @Test("7 fresh keys at once: exactly 5 come in, the lock keeps the count whole")
  func parallelNewKeys() throws {
    // Unchecked: the threads below only read it (each runs its own ssh client).
    nonisolated(unsafe) let door = try SSHDoorFixture()
    let keys = try (1...7).map { try door.makeKey("rush\($0)") }
    let lock = NSLock()
    nonisolated(unsafe) var all: [Int: RunResult] = [:]
    DispatchQueue.concurrentPerform(iterations: keys.count) { index in
      let result = try? door.ssh(keys[index], ["whoami"])
      lock.withLock { all[index] = result }
    }
    #expect(all.count == 7)
    let admitted = all.values.filter { $0.status == 0 }
    let refused = all.values.filter {
      $0.stderrLines == ["forum: too many new keys from this address; try again later."]
    }
    #expect(admitted.count == 5, "\(all.values.map(\.summary))\n\(door.sshdLog)")
    #expect(refused.count == 2, "\(all.values.map(\.summary))")
    let known = try keys.filter { FileManager.default.fileExists(atPath: try memberFile(door, $0)) }
    #expect(known.count == 5)
    if let first = known.first {
      #expect(try members(door, first) == 6)
      // The state is whole afterwards: a known key in, another new one still refused.
      #expect(try door.ssh(first, ["whoami"]).status == 0)
      let late = try door.ssh(try door.makeKey("late"), ["whoami"])
      #expect(late.status == 3, "\(late.summary)")
    }
  }

  @Test("ssh-setup prints sshd's own per-address limit beside the door's budget")
  func setupPrintsPerSourceLimit() throws {
    let forum = try ForumFixture()
    let printed = try ForumFixture.launch(
      forum.binary,
      arguments: [
        "ssh-setup", "--db", "/srv/forum/board.sqlite", "--sshd-config", "--new-keys-per-hour", "3",
      ], environment: forum.environment(), input: Data(), timeout: 60)
    #expect(printed.status == 0, "\(printed.summary)")
    #expect(printed.stdout.contains("PerSourceMaxStartups"), "\(printed.summary)")
    let script = try ForumFixture.launch(
      forum.binary,
      arguments: ["ssh-setup", "--db", "/srv/forum/board.sqlite", "--new-keys-per-hour", "3"],
      environment: forum.environment(), input: Data(), timeout: 60)
    #expect(script.stdout.contains("--new-keys-per-hour 3"), "\(script.summary)")
  }
}

/// `forum ssh-session` run as sshd runs it, without sshd. sshd hands the door the client's words
/// as bytes (`SSH_ORIGINAL_COMMAND`): words that are not UTF-8 are refused in one line, as the
/// same bytes in an argument or a pipe are, and nothing is written (read leniently, `x\xffy`
/// was stored as `x�y`). One key holds at most `SSHDoorState.sessionsPerKey` sessions at once
/// (forty took 700 MB).
@Suite("the ssh door's session, run directly")
struct SSHDoorSessionTests {
  @Test func aKeyHoldsAtMostSixSessions() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(["new", "--title", "one"], profile: "owner")
    let key = "SHA256:" + String(repeating: "B", count: 43)
    let arguments = [
      "ssh-session", "--db", forum.db, "--key", key, "--state", forum.root + "/door-state",
    ]
    var open: [(ChildProcess, Pipe)] = []
    defer {
      for (process, input) in open {
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
      }
    }
    // Six prompts held open (their input never ends), each seen at its prompt's first output.
    for _ in 0..<6 {
      let process = ChildProcess()
      process.executableURL = URL(fileURLWithPath: forum.binary)
      process.arguments = arguments
      process.environment = forum.environment()
      let input = Pipe()
      let output = Pipe()
      process.standardInput = input
      process.standardOutput = output
      process.standardError = output
      try process.run()
      open.append((process, input))
      try input.fileHandleForWriting.write(contentsOf: Data("list\n".utf8))
      var seen = Data()
      while !String(decoding: seen, as: UTF8.self).contains("one") {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        seen += chunk
      }
      #expect(String(decoding: seen, as: UTF8.self).contains("one"), "session \(open.count)")
    }
    let seventh = try ForumFixture.launch(
      forum.binary, arguments: arguments, environment: forum.environment(),
      input: Data("list\n".utf8), timeout: 60)
    #expect(
      seventh.status == 3 && seventh.stdout.isEmpty
        && seventh.stderrLines == ["forum: this key has 6 sessions open already; close one first."],
      "\(seventh.summary)")
    // One ends: its slot is free again.
    let (first, firstInput) = open.removeFirst()
    try firstInput.fileHandleForWriting.close()
    first.waitUntilExit()
    let again = try ForumFixture.launch(
      forum.binary, arguments: arguments, environment: forum.environment(),
      input: Data("list\n".utf8), timeout: 60)
    #expect(again.status == 0 && again.stdout.contains("one"), "\(again.summary)")
  }

  /// A board file that is not there yet: the door says the board has no owner, and neither
  /// makes the file nor counts the key against its address's new keys.
  @Test func aBoardNotMadeYetIsNotMadeByTheDoor() throws {
    let forum = try ForumFixture()
    let board = forum.root + "/not-yet.sqlite"
    let state = forum.root + "/door-state"
    let run = try ForumFixture.launch(
      forum.binary,
      arguments: [
        "ssh-session", "--db", board, "--key", "SHA256:" + String(repeating: "C", count: 43),
        "--state", state,
      ],
      environment: forum.environment(), input: Data(), timeout: 60)
    #expect(
      run.status == 1 && run.stderrLines.count == 1 && run.stderr.contains("has no owner yet"),
      "\(run.summary)")
    #expect(!FileManager.default.fileExists(atPath: board))
    #expect(!FileManager.default.fileExists(atPath: state + "/new-keys"))
  }

  @Test func aCommandThatIsNotUTF8IsRefused() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(["new", "--title", "one"], profile: "owner")
    let before = try forum.importFingerprint()
    let key = "SHA256:" + String(repeating: "A", count: 43)
    let script =
      #"SSH_ORIGINAL_COMMAND="$(printf 'comment 1 x\377y')" exec "$0" ssh-session --db "$1" "#
      + #"--key "$2" --state "$3""#
    let run = try ForumFixture.launch(
      "/bin/sh",
      arguments: ["-c", script, forum.binary, forum.db, key, forum.root + "/door-state"],
      environment: forum.environment(), input: Data(), timeout: 60)
    #expect(
      run.status == 1 && run.stdout.isEmpty
        && run.stderrLines == ["forum: the command is not valid UTF-8; nothing was done"],
      "\(run.summary)")
    #expect(try forum.importFingerprint() == before)
  }
}
