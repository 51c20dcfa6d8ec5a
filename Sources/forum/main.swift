import ForumCLI

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

// The raw argv, not CommandLine.arguments: that one turns invalid UTF-8 into U+FFFD, which
// would be stored where the same bytes from a pipe are refused.
// A login shell (argv[0] "-forum"): the ssh door's user, reached without the door's forced
// command. Nothing runs.
if let zero = CommandLine.unsafeArgv[0], zero.pointee == CChar(UInt8(ascii: "-")) {
  exit(ForumMain.refuseLoginShell())
}
exit(
  ForumMain.run(
    rawArguments: (1..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0] },
    environment: ForumMain.processEnvironment()))
