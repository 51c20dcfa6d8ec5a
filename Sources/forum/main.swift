import ForumCLI
import Foundation

// The raw argv, not CommandLine.arguments: that one turns invalid UTF-8 into U+FFFD, which
// would be stored where the same bytes from a pipe are refused.
exit(
  ForumMain.run(
    rawArguments: (1..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0] },
    environment: ProcessInfo.processInfo.environment))
