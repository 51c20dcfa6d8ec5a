import Foundation

// forum-bench SUBCOMMAND [OPTIONS]: one entry point per benchmark or stress tool.
let usage = """
  usage: forum-bench seed --db PATH --threads N --comments M [--users U] [--big-thread C]
                          [--image-every K] [--batch P] [--cache-mb MB] [--dms D]
                          [--one-by-one yes] [--without-search yes]
         forum-bench run --db PATH [--db PATH …] [--forum PATH] [--sqlite3 PATH] [--repeats R]
                         [--big-thread NUMBER] [--small-thread NUMBER] [--comment-thread NUMBER]
         forum-bench writes --db PATH [--forum PATH] [--sqlite3 PATH] [--count N] [--rounds R]
                            [--thread NUMBER] [--latency N]
         forum-bench private --db PATH [--db PATH …] [--repeats R]
         forum-bench pg --owner URI --member URI --threads N [--big-thread C] [--repeats R]
         forum-bench hammer --db PATH --count N --tag T
         forum-bench images --out DIR [--seeds]
         forum-bench live [--forum PATH] [--db PATH|URI] [--writer-db URI] [--posts N]
                          [--mode show|chat]
         forum-bench serve-floor --listen HOST:PORT --body FILE
         forum-bench noop

  """

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "hammer":
  exit(ConcurrentWriter.main(Array(arguments.dropFirst())))
case "seed":
  exit(SeedCommand.main(Array(arguments.dropFirst())))
case "run":
  exit(RunCommand.main(Array(arguments.dropFirst())))
case "writes":
  exit(PipedWrites.main(Array(arguments.dropFirst())))
case "private":
  exit(PrivateReadsCommand.main(Array(arguments.dropFirst())))
case "pg":
  exit(PostgresBenchmark.main(Array(arguments.dropFirst())))
case "live":
  exit(LiveLatency.main(Array(arguments.dropFirst())))
case "images":
  exit(ImagesCommand.main(Array(arguments.dropFirst())))
case "serve-floor":
  exit(ServeFloor.main(Array(arguments.dropFirst())))
case "noop":
  // The start-up floor of a Swift program linked like forum (runtime + Foundation).
  exit(0)
default:
  FileHandle.standardError.write(Data(usage.utf8))
  exit(2)
}
