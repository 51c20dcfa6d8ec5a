import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

extension ForumMain {
  /// `run(arguments:)` for the process's own argv: an argument that is not valid UTF-8 is
  /// refused in one line, as the same bytes on a pipe are, instead of being stored repaired.
  public static func run(
    rawArguments: [UnsafeMutablePointer<CChar>?], environment: [String: String]
  ) -> Int32 {
    var arguments: [String] = []
    for (index, raw) in rawArguments.enumerated() {
      guard let raw else { continue }
      guard let text = String(validatingCString: raw) else {
        let terminal = Terminal(environment: environment, noColorFlag: true)
        let error = DatastoreError(
          .invalid, field: "argument", reason: InputReason.argumentNotUTF8(index + 1))
        return report(
          CLIError(error), json: arguments.contains("--json"), line: nil,
          japanese: terminal.japanese)
      }
      arguments.append(text)
    }
    return run(arguments: arguments, environment: environment)
  }
}
