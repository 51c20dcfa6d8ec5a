import Foundation
import Testing

@testable import Datastore

/// Faults around the board: a full output, a file size limit, another writer's lock, a
/// database file removed under a running prompt.
@Suite("faults")
struct FaultTests {
  /// Runs `forum` through `/bin/sh -c SCRIPT`, where `"$@"` is the forum command line.
  private func shell(_ forum: ForumFixture, _ script: String, _ arguments: [String]) throws
    -> RunResult
  {
    try ForumFixture.launch(
      "/bin/sh",
      arguments: ["-c", script, "sh", forum.binary, "--db", forum.db, "--profile", "alice"]
        + arguments, environment: forum.environment(), input: Data(), timeout: 60)
  }

  @Test func anOutputThatCannotBeWrittenFails() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "something to list"])
    let full = try shell(forum, "exec \"$@\" > /dev/full", ["list"])
    #expect(full.status == 1, "\(full.summary)")
    #expect(full.stderr.hasPrefix("forum: cannot write output"), "\(full.summary)")
  }

  @Test func aFileSizeLimitIsAnErrorNotASignal() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    let big = String(repeating: "long description ", count: 500)
    // The test runner may ignore SIGXFSZ, and ignored signals are inherited: forum starts with
    // the default action, as from a login shell.
    let limited = try shell(
      forum, "ulimit -f 0; exec env --default-signal=XFSZ \"$@\"",
      ["new", "--title", "second", "--description", big])
    #expect(limited.status == 1, "\(limited.summary)")
    #expect(limited.stderrLines.count == 1, "\(limited.summary)")
    #expect(try forum.storedThreads().count == 1, "nothing half-written")
    try forum.ok(["new", "--title", "second", "--description", big])
    #expect(try forum.storedThreads().count == 2, "a retry posts once")
  }
}

@Suite(
  "faults at the prompt (tmux)")
struct PromptFaultTests {
  @Test func aLockWaitSaysSoAndCtrlCStopsIt() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "busy"])
    let store = try forum.openStore()
    let storage = try #require(store.engine as? SQLiteEngine)
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")

    try storage.connection.execute("BEGIN IMMEDIATE")  // another writer holds the lock
    try tmux.enter("comment 1 while locked")
    try tmux.wait("the waiting notice") {
      $0.contains("waiting for another writer… Ctrl-C to stop")
    }
    try tmux.press("C-c")
    try tmux.wait("interrupted") { $0.contains("Interrupted; nothing was saved.") }
    try tmux.waitForPrompt("forum>")
    try storage.connection.execute("ROLLBACK")
    #expect(try forum.storedComments().isEmpty)

    // Once the lock is gone, the same command goes through.
    try tmux.enter("comment 1 after the lock")
    try tmux.wait("posted") { $0.contains("Posted 1/1.") }
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }

  @Test func ctrlCEndsAOneShotCommandWith130AndNothingSaved() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    let tmux = try TmuxSession(forum: forum, profile: "alice", arguments: ["comment", "1"])
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt(">")
    try tmux.type("half a thought")
    try tmux.press("C-c")
    #expect(try tmux.waitForExit() == 130)
    #expect(try forum.storedComments().isEmpty)
  }

  @Test func aDatabaseRemovedUnderThePromptIsRefusedNotWrittenIntoTheVoid() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "here"])
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    for suffix in ["", "-wal", "-shm"] { unlink(forum.db + suffix) }
    try tmux.enter("comment 1 into the void")
    try tmux.wait("the refusal") {
      $0.contains { $0.contains("was moved or deleted while forum had it open") }
    }
    #expect(try !tmux.screen().contains("Posted 1/1."))
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
