import ForumCLI
import Foundation

exit(
  ForumMain.run(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment))
