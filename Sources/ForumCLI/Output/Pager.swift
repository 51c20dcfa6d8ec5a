import Foundation

/// Output taller than the screen, at a terminal, goes through `$PAGER` (`less -R` by default),
/// as git does; never in pipes, never with `--no-pager`.
enum Pager {
  /// The pager command: `$PAGER`, or `less -R`; nil when `PAGER` is empty or `cat`.
  static func command(environment: [String: String]) -> String? {
    let given = environment["PAGER"]?.trimmingCharacters(in: .whitespaces)
    if let given {
      return given.isEmpty || given == "cat" ? nil : given
    }
    return "less -R"
  }

  /// Shows `lines` in the pager; false when it could not be started (print them instead).
  static func show(_ lines: [String], command: String, environment: [String: String]) -> Bool {
    var environment = environment
    // Like git: quit when it fits, keep colours, leave the screen as it was.
    if environment["LESS"] == nil { environment["LESS"] = "FRX" }
    if environment["LV"] == nil { environment["LV"] = "-c" }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.environment = environment
    let pipe = Pipe()
    process.standardInput = pipe
    fflush(stdout)
    do { try process.run() } catch { return false }
    // A pager quit early closes its end: that is not our failure.
    let previous = signal(SIGPIPE, SIG_IGN)
    let text = Data((lines.joined(separator: "\n") + "\n").utf8)
    try? pipe.fileHandleForWriting.write(contentsOf: text)
    try? pipe.fileHandleForWriting.close()
    process.waitUntilExit()
    signal(SIGPIPE, previous)
    return true
  }
}
