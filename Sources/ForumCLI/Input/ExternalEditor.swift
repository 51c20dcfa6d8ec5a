#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// Composing in `$VISUAL` or `$EDITOR`: the text goes to a private temporary file, the editor
/// runs on the terminal, and the file is read back and removed whatever happened.
enum ExternalEditor {
  /// The editor command, or nil when neither variable is set.
  static func command(environment: [String: String]) -> String? {
    for name in ["VISUAL", "EDITOR"] {
      if let value = environment[name]?.trimmingSpaces(), !value.isEmpty {
        return value
      }
    }
    return nil
  }

  /// Runs the editor on `text`; returns what the file holds when it exits successfully.
  static func edit(_ text: String, command: String, environment: [String: String]) throws
    -> String
  {
    let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
    var template = Array((base + "/forum-draft-XXXXXX.txt").utf8CString)
    let descriptor = mkstemps(&template, 4)
    guard descriptor >= 0 else {
      throw CLIError.local(.cannotCreateEditorFile(error: String(cString: strerror(errno))))
    }
    let path = String(cString: template)
    defer { unlink(path) }
    let lines = text.isEmpty ? "" : text + "\n"  // editors expect a file of whole lines
    _ = Data(lines.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    // The command may carry arguments (`code --wait`), so a shell splits it, as git does.
    let words = ["/bin/sh", "-c", command + " \"$1\"", "sh", path]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] =
      environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    fflush(stdout)  // what was printed comes before the editor
    var pid = pid_t()
    let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, argv, envp)
    guard spawned == 0 else {
      throw CLIError.local(.cannotStartEditor(error: String(cString: strerror(spawned))))
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // Exited (no signal) with status 0.
    guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
      throw CLIError.local(.editorFailed(command: SafeText.sanitize(command)))
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CLIError.local(.editorFileGone)
    }
    var result = String(decoding: data, as: UTF8.self)
    while result.hasSuffix("\n") { result.removeLast() }
    return result
  }
}
