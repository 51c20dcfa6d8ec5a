import CSpawn
import Foundation
import Testing

/// A tmux server of its own (socket under the fixture's directory) with one 100×30 window running
/// `forum`. Killed when the value goes away, whatever happened.
final class TmuxSession {
  static let path: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  let forum: ForumFixture
  let tmux: String
  let target = "forum"

  init(
    forum: ForumFixture, profile: String, environment extra: [String: String] = [:],
    arguments: [String] = [], interactiveShell: Bool = false, database: String? = nil,
    command given: [String]? = nil
  ) throws {
    guard let tmux = TmuxSession.path else { throw ForumTestError("tmux is not installed") }
    self.forum = forum
    self.tmux = tmux
    var environment = forum.environment(extra: extra)
    environment["TERM"] = "screen"
    // A shell around forum shows its exit status and keeps the pane open afterwards. It traps
    // SIGINT (a trap, unlike an ignored signal, is not inherited) so Ctrl-C reaches forum alone.
    let wrapper = "trap : INT; \"$@\"; echo \"[forum exited with $?]\"; exec sleep 600"
    // `command`: another program in the pane (ssh to the door), run as forum would be.
    let forumCommand =
      given ?? [forum.binary, "--db", database ?? forum.db, "--profile", profile] + arguments
    // With `interactiveShell`, forum runs under an interactive bash with job control, typed at
    // its `$` prompt, so Ctrl-Z stops it and `fg` brings it back as at a real terminal.
    if interactiveShell { environment["PS1"] = "$ " }
    let command =
      ["/usr/bin/env", "-i"]
      + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
      + (interactiveShell
        ? ["/bin/bash", "--norc", "--noprofile", "-i"]
        : ["/bin/sh", "-c", wrapper, "sh"] + forumCommand)
    let start = ["new-session", "-d", "-s", target, "-x", "100", "-y", "30"] + command
    // The client started here forks the tmux server, which keeps what the client inherited:
    // - every open descriptor, among them the sockets Foundation's Process watches to learn that
    //   a child ended (a launch would wait as long as the server lives), so a subshell closes
    //   everything above stderr before it becomes the tmux client;
    // - the signal mask and ignored signals of the test runner's thread (SIGTERM blocked: then
    //   kill-server does nothing, and forum in the pane would not run as at a real terminal),
    //   so it is started with posix_spawn, an empty mask and default handlers.
    let closeAndExec =
      "( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; "
      + "if [ \"$fd\" -gt 2 ]; then eval \"exec $fd>&-\"; fi; done 2>/dev/null; exec \"$@\" )"
    let log = forum.root + "/tmux-start.log"
    let status = try TmuxSession.spawnWithCleanSignals(
      ["/bin/bash", "-c", closeAndExec, "bash", tmux, "-u", "-f", "/dev/null"] + start,
      environment: tmuxEnvironment, output: log)
    if status != 0 {
      let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
      throw ForumTestError("tmux new-session failed (status \(status)): \(said)")
    }
    if interactiveShell {
      try wait("the shell's prompt") { $0.last == "$" }
      // Single quotes: the fixture's paths hold no quote.
      try enter(forumCommand.map { "'" + $0 + "'" }.joined(separator: " "))
    }
  }

  /// Runs `arguments` to its end with stdin from /dev/null, stdout and stderr into `output`,
  /// no blocked signals and default signal handlers. Returns the exit status.
  private static func spawnWithCleanSignals(
    _ arguments: [String], environment: [String: String], output: String
  ) throws -> Int32 {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [
      SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGCHLD, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH,
      SIGUSR1, SIGUSR2, SIGALRM,
    ] {
      sigaddset(&defaults, signal)
    }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    cspawn_addclosefrom(&actions, 3)  // none of the test process's other descriptors

    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    var pid = pid_t()
    let error = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
    guard error == 0 else {
      throw ForumTestError("cannot start \(arguments[0]): \(String(cString: strerror(error)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { throw ForumTestError("waitpid: \(errno)") }
    }
    // WIFEXITED / WEXITSTATUS by hand: the macros do not come through to Swift.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  }

  private var tmuxEnvironment: [String: String] {
    [
      "PATH": "/usr/bin:/bin", "HOME": forum.root + "/home", "LANG": "C.UTF-8",
      "TMUX_TMPDIR": forum.root,
    ]
  }

  deinit {
    _ = try? run(["kill-server"])
  }

  @discardableResult
  func run(_ arguments: [String]) throws -> RunResult {
    let result = try ForumFixture.launch(
      tmux, arguments: ["-u", "-f", "/dev/null"] + arguments, environment: tmuxEnvironment,
      input: Data(), timeout: 30)
    if result.status != 0 && arguments.first != "kill-server" {
      throw ForumTestError("tmux \(arguments.prefix(3)) failed: \(result.stderr)")
    }
    return result
  }

  /// Types text literally.
  func type(_ text: String) throws { try run(["send-keys", "-t", target, "-l", text]) }

  /// Presses keys by tmux name: Enter, Tab, C-c, C-d.
  func press(_ keys: String...) throws { try run(["send-keys", "-t", target] + keys) }

  /// Types a line and presses Enter.
  func enter(_ line: String) throws {
    try type(line)
    try press("Enter")
  }

  /// The pane with its scrollback, trailing blanks trimmed.
  func screen() throws -> [String] {
    let lines = try run(["capture-pane", "-p", "-J", "-S", "-1000", "-t", target]).stdoutLines
      .map { String($0.reversed().drop { $0 == " " }.reversed()) }
    return Array(lines.reversed().drop(while: \.isEmpty).reversed())
  }

  /// Polls the screen until `condition` holds; fails after `timeout` seconds with the screen.
  @discardableResult
  func wait(
    _ what: String, timeout: TimeInterval = 20, sourceLocation: SourceLocation = #_sourceLocation,
    until condition: ([String]) -> Bool
  ) throws -> [String] {
    let deadline = Date().addingTimeInterval(timeout)
    var lines: [String] = []
    while Date() < deadline {
      lines = try screen()
      if condition(lines) { return lines }
      usleep(30_000)
    }
    Issue.record(
      "timed out waiting for \(what); screen:\n\(lines.suffix(30).joined(separator: "\n"))",
      sourceLocation: sourceLocation)
    throw ForumTestError("timed out waiting for \(what)")
  }

  /// Waits until the last line on screen is `prompt` (trailing spaces ignored).
  @discardableResult
  func waitForPrompt(
    _ prompt: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [String] {
    let expected = prompt.trimmingCharacters(in: .whitespaces)
    return try wait("prompt «\(prompt)»", sourceLocation: sourceLocation) {
      $0.last?.trimmingCharacters(in: .whitespaces) == expected
    }
  }

  /// Waits for forum to leave and returns its exit status.
  func waitForExit(sourceLocation: SourceLocation = #_sourceLocation) throws -> Int32? {
    let lines = try wait("forum to exit", sourceLocation: sourceLocation) {
      $0.contains { $0.hasPrefix("[forum exited with ") }
    }
    let line = lines.last { $0.hasPrefix("[forum exited with ") } ?? ""
    return Int32(line.dropFirst("[forum exited with ".count).dropLast())
  }
}

@Suite(
  "in a real terminal (tmux)",
  .enabled(
    if: FileManager.default.fileExists(atPath: "/proc/self/fd"),
    "starting tmux cleanly needs /proc/self/fd (Linux)"))
struct TerminalTests {
  @Test func aSessionAtThePrompt() throws {
    let forum = try ForumFixture()
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }

    let banner = try tmux.waitForPrompt("forum>")
    #expect(banner.contains { $0.hasPrefix("forum 0.1.0 — ") && $0.contains("Type 'help'") })

    // new: title, description lines ending with ".", no image.
    try tmux.enter("new")
    try tmux.waitForPrompt("Title:")
    try tmux.enter("Hello tmux")
    try tmux.waitForPrompt(">")
    #expect(try tmux.screen().contains("Description (end with a line holding a single \".\"):"))
    try tmux.enter("first line")
    try tmux.enter(".")
    try tmux.waitForPrompt("Image path (Enter for none):")
    try tmux.press("Enter")
    try tmux.wait("Posted #1.") { $0.contains("Posted #1.") }
    try tmux.waitForPrompt("forum>")

    try tmux.enter("list")
    try tmux.wait("the list") {
      $0.contains { $0.hasPrefix("#1 ●  Hello tmux — first line") && $0.hasSuffix("0  now") }
    }
    try tmux.waitForPrompt("forum>")

    try tmux.enter("show 1")
    let shown = try tmux.waitForPrompt("forum #1>")
    #expect(shown.contains("#1 Hello tmux"))
    #expect(shown.contains("No comments yet; new ones appear below."))
    #expect(shown.contains("first line"))

    // Tab completes a command word…
    try tmux.type("he")
    try tmux.press("Tab")
    try tmux.wait("completion of he") { $0.last == "forum #1> help" }
    try tmux.press("Enter")
    try tmux.wait("help output") { $0.contains("Commands:") }
    // The list is taller than this 30-row terminal now, so it may come in the pager: leave it.
    func atPrompt(_ lines: [String]) -> Bool {
      lines.last?.trimmingCharacters(in: .whitespaces) == "forum #1>"
    }
    try tmux.wait("the prompt or the pager") { lines in
      atPrompt(lines) || lines.last.map { $0.hasPrefix(":") || $0.contains("(END)") } == true
    }
    if try !atPrompt(tmux.screen()) { try tmux.press("q") }
    try tmux.waitForPrompt("forum #1>")

    // …and a thread number, as `#1` inside a thread, where a bare number would be prose.
    try tmux.type("comment ")
    try tmux.press("Tab")
    try tmux.wait("completion of the thread number") { $0.last == "forum #1> comment #1" }
    try tmux.enter("via completion")
    try tmux.wait("Posted 1/1.") { $0.contains("Posted 1/1.") }
    try tmux.waitForPrompt("forum #1>")

    // Ctrl-C on a half-typed line drops it.
    try tmux.type("comment 1 never saved")
    // Typed before Ctrl-C: keys still unread when it comes are dropped with the line (the
    // run on a loaded machine that pressed it at once saw only `^C`).
    try tmux.wait("the half-typed line") { $0.last?.hasSuffix("comment 1 never saved") == true }
    try tmux.press("C-c")
    try tmux.wait("^C") { $0.contains { $0.hasSuffix("comment 1 never saved^C") } }
    try tmux.waitForPrompt("forum #1>")

    // Ctrl-C in a draft cancels the whole command.
    try tmux.enter("new")
    try tmux.waitForPrompt("Title:")
    try tmux.enter("Draft title")
    try tmux.waitForPrompt(">")
    try tmux.enter("draft body")
    try tmux.type("half a line")
    try tmux.wait("the half line") { $0.last?.hasSuffix("half a line") == true }
    try tmux.press("C-c")
    try tmux.wait("cancelled") { $0.contains("Cancelled; nothing was saved.") }
    try tmux.waitForPrompt("forum #1>")

    // Ctrl-D on the empty line leaves, with status 0.
    try tmux.press("C-d")
    #expect(try tmux.waitForExit() == 0)

    #expect(try forum.storedThreads().map { $0["title"] } == [.string("Hello tmux")])
    #expect(try forum.storedThreads().first?["description"] == .string("first line"))
    #expect(try forum.storedComments().map { $0["text"] } == [.string("via completion")])
    let history = try String(contentsOfFile: forum.stateHome + "/forum/history", encoding: .utf8)
    for command in ["new", "list", "show 1", "help", "comment #1 via completion"] {
      let entries = history.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
      #expect(entries.contains(command), "history has \(command)")
    }
    #expect(!history.contains("never saved"))
    #expect(!history.contains("Hello tmux"), "answers are not commands")
  }

  @Test func deleteAsksFirstAtThePrompt() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "keep me"])
    try forum.ok(["new", "--title", "delete me"])
    try forum.ok(["new", "--title", "bob's"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")

    try tmux.enter("delete 1")
    try tmux.waitForPrompt("Delete? [y/N]")
    #expect(try tmux.screen().contains("This will delete #1 \"keep me\" · 0 comments."))
    try tmux.enter("n")
    try tmux.wait("cancelled") { $0.contains("Cancelled; nothing was saved.") }
    try tmux.waitForPrompt("forum>")

    try tmux.enter("delete 2")
    try tmux.waitForPrompt("Delete? [y/N]")
    try tmux.enter("y")
    try tmux.wait("deleted") { $0.contains("Deleted #2.") }
    try tmux.waitForPrompt("forum>")

    try tmux.enter("delete 3")
    try tmux.waitForPrompt("Delete? [y/N]")
    try tmux.enter("y")
    try tmux.wait("refusal") {
      $0.contains { $0.hasSuffix("(the author) and moderators may delete #3") }
    }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)

    #expect(
      try forum.storedThreads().map { $0["title"] } == [.string("keep me"), .string("bob's")])
  }

  @Test func newCommentsInTheCurrentThreadAppearWhileTyping() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "chat"])
    try forum.ok(["comment", "1", "before"], profile: "bob")
    let tmux = try TmuxSession(forum: forum, profile: "alice")
    defer { _ = try? tmux.run(["kill-server"]) }
    try tmux.waitForPrompt("forum>")
    try tmux.enter("show 1")
    try tmux.waitForPrompt("forum #1>")
    try tmux.type("hel")
    try tmux.wait("typed text") { $0.last == "forum #1> hel" }

    // Another process comments; it shows up above the prompt, the half-typed line intact.
    try forum.ok(["comment", "1", "live from bob"], profile: "bob")
    let screen = try tmux.wait("the new comment") { $0.contains("    live from bob") }
    #expect(screen.last == "forum #1> hel")
    #expect(screen.filter { $0.contains("before") }.count == 1, "old comments are not repeated")

    // Your own comment is not echoed a second time.
    try tmux.press("C-u")
    try tmux.enter("comment mine")
    try tmux.wait("posted") { $0.contains("Posted 1/3.") }
    try forum.ok(["comment", "1", "after mine"], profile: "bob")
    let later = try tmux.wait("the next comment") { $0.contains("    after mine") }
    #expect(later.filter { $0.contains("    mine") }.isEmpty)
    try tmux.enter("quit")
    #expect(try tmux.waitForExit() == 0)
  }
}
