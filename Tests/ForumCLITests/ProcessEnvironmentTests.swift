import Foundation
import Testing

@testable import ForumCLI

/// `forum` reads its environment from `environ` itself (issue #13: a tenth of `--version` went to
/// ProcessInfo's reader). It must read what ProcessInfo reads.
@Suite("process environment")
struct ProcessEnvironmentTests {
  @Test func sameAsProcessInfo() {
    #expect(ForumMain.processEnvironment() == ProcessInfo.processInfo.environment)
  }

  /// Values with `=` and non-ASCII, an empty value, an entry without `=`, a name twice (the
  /// first wins, as for getenv). Built as a list of its own: `setenv` here would move `environ`
  /// while other tests' `Process.run` copies it (a crash seen under load).
  @Test func readsEveryShapeOfEntry() {
    let texts = [
      "FORUM_TEST_ENVIRONMENT=a=b=c ünïcode", "FORUM_TEST_EMPTY=", "NO_EQUALS", "TWICE=first",
      "TWICE=second",
    ]
    let entries = texts.map { strdup($0) } + [nil]
    defer { for entry in entries { free(entry) } }
    var list = entries
    let environment = list.withUnsafeMutableBufferPointer {
      ForumMain.environment(of: $0.baseAddress!)
    }
    #expect(
      environment == [
        "FORUM_TEST_ENVIRONMENT": "a=b=c ünïcode", "FORUM_TEST_EMPTY": "", "TWICE": "first",
      ])
  }
}
