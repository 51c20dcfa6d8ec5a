import Foundation

/// Composing in `$VISUAL` or `$EDITOR`: the text goes to a private temporary file, the editor
/// runs on the terminal, and the file is read back and removed whatever happened.
enum ExternalEditor {
  /// The editor command, or nil when neither variable is set.
  static func command(environment: [String: String]) -> String? {
    for name in ["VISUAL", "EDITOR"] {
      if let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
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
      throw CLIError.failed(
        "cannot create a file for the editor: \(String(cString: strerror(errno)))")
    }
    let path = String(cString: template)
    defer { unlink(path) }
    let lines = text.isEmpty ? "" : text + "\n"  // editors expect a file of whole lines
    _ = Data(lines.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    // The command may carry arguments (`code --wait`), so a shell splits it, as git does.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command + " \"$1\"", "sh", path]
    process.environment = environment
    try process.run()
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
      throw CLIError.failed("the editor (\(SafeText.sanitize(command))) did not finish cleanly")
    }
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CLIError.failed("the editor's file is gone")
    }
    var result = String(decoding: data, as: UTF8.self)
    while result.hasSuffix("\n") { result.removeLast() }
    return result
  }
}
