import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// Output taller than the screen, at a terminal, goes through `$PAGER` (`less -R` by default),
/// as git does; never in pipes, never with `--no-pager`.
enum Pager {
  /// The pager command: `$PAGER`, or `less -R`; nil when `PAGER` is empty or `cat`.
  static func command(environment: [String: String]) -> String? {
    let given = environment["PAGER"]?.trimmingSpaces()
    if let given {
      return given.isEmpty || given == "cat" ? nil : given
    }
    return "less -R"
  }

  /// Shows `lines` in the pager; false when it could not be started (print them instead).
  static func show(
    _ lines: [String], command: String, environment: [String: String], japanese: Bool = false
  ) -> Bool {
    var environment = environment
    // Like git: quit when it fits, keep colours, leave the screen as it was.
    if environment["LESS"] == nil { environment["LESS"] = "FRX" }
    if environment["LV"] == nil { environment["LV"] = "-c" }
    // posix_spawn rather than Foundation's Process, which FoundationEssentials does not have.
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return false }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
    posix_spawn_file_actions_addclose(&actions, ends[0])
    posix_spawn_file_actions_addclose(&actions, ends[1])
    let words = ["/bin/sh", "-c", command]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] =
      environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    fflush(stdout)
    var pid = pid_t()
    let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp)
    close(ends[0])
    guard spawned == 0 else {
      close(ends[1])
      return false
    }
    // A pager quit early closes its end: that is not our failure.
    let previous = signal(SIGPIPE, SIG_IGN)
    let text = Array((lines.joined(separator: "\n") + "\n").utf8)
    var offset = 0
    while offset < text.count {
      let written = text[offset...].withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { break }
      offset += written
    }
    close(ends[1])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    signal(SIGPIPE, previous)
    // The shell's 127 and 126: the pager is not there or cannot run. The output is printed
    // plainly instead, and that is said once a run.
    let exited = status & 0x7F == 0
    let code = (status >> 8) & 0xFF
    if exited && (code == 127 || code == 126) {
      let firstTime = brokenSaid.withLock { said in
        defer { said = true }
        return !said
      }
      if firstTime {
        ForumMain.writeError(
          "forum: "
            + Messages(japanese: japanese).pagerFailed(SafeText.sanitize(command)))
      }
      return false
    }
    return true
  }

  /// A pager that cannot run is said once, not before every long output.
  private static let brokenSaid = Mutex(false)
}
