import Foundation

/// `--name value` pairs of a subcommand; a name may repeat (`run --db A --db B`).
struct Options {
  private var values: [String: [String]] = [:]

  /// Parses `arguments`; throws a usage message for a stray word, a missing value or a name
  /// outside `known`.
  init(_ arguments: [String], known: Set<String>) throws {
    var rest = arguments[...]
    while let word = rest.popFirst() {
      guard word.hasPrefix("--"), known.contains(String(word.dropFirst(2))) else {
        throw UsageError("unknown option \(word)")
      }
      guard let value = rest.popFirst() else { throw UsageError("\(word) needs a value") }
      values[String(word.dropFirst(2)), default: []].append(value)
    }
  }

  func all(_ name: String) -> [String] { values[name] ?? [] }

  func string(_ name: String) -> String? { values[name]?.last }

  /// A whole number (0 or more; `_` separators allowed), `fallback` when absent.
  func int(_ name: String, fallback: Int? = nil) throws -> Int? {
    guard let text = string(name) else { return fallback }
    guard let value = Int(text.replacingOccurrences(of: "_", with: "")), value >= 0 else {
      throw UsageError("--\(name) takes a whole number, not \(text)")
    }
    return value
  }
}

struct UsageError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// A failure that ends a subcommand with a one-line message.
struct BenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Prints `error` the way every subcommand reports a failure and returns its exit status.
func reportFailure(_ command: String, _ error: Error) -> Int32 {
  let usageFailure = error is UsageError
  FileHandle.standardError.write(Data("forum-bench \(command): \(error)\n".utf8))
  if usageFailure { FileHandle.standardError.write(Data(usage.utf8)) }
  return usageFailure ? 2 : 1
}

/// The repository root, found from this source file so fixtures load from any working directory.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().deletingLastPathComponent().path

/// A fresh private directory under `$TMPDIR`; the caller removes it.
func makeTemporaryDirectory(_ prefix: String) throws -> String {
  let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
  var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
  guard let made = mkdtemp(&template) else {
    throw BenchError("cannot create a temporary directory in \(base)")
  }
  return String(cString: made)
}
