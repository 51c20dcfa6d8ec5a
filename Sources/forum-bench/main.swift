import Foundation

// forum-bench SUBCOMMAND [OPTIONS]: one entry point per benchmark or stress tool.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "hammer":
  exit(ConcurrentWriter.main(Array(arguments.dropFirst())))
default:
  FileHandle.standardError.write(Data("usage: forum-bench hammer --db PATH --count N --tag T\n".utf8))
  exit(2)
}
