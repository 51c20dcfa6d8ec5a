import Foundation
import Testing

@testable import ForumCLI

/// `forum` reads its environment from `environ` itself (issue #13: a tenth of `--version` went to
/// ProcessInfo's reader). It must read what ProcessInfo reads.
@Suite("process environment")
struct ProcessEnvironmentTests {
  @Test func sameAsProcessInfo() {
    setenv("FORUM_TEST_ENVIRONMENT", "a=b=c ünïcode", 1)
    setenv("FORUM_TEST_EMPTY", "", 1)
    defer {
      unsetenv("FORUM_TEST_ENVIRONMENT")
      unsetenv("FORUM_TEST_EMPTY")
    }
    let environment = ForumMain.processEnvironment()
    #expect(environment["FORUM_TEST_ENVIRONMENT"] == "a=b=c ünïcode")
    #expect(environment["FORUM_TEST_EMPTY"] == "")
    #expect(environment == ProcessInfo.processInfo.environment)
  }
}
