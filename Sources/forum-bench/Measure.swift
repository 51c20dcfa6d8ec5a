import Foundation

/// Monotonic time in seconds.
func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Median seconds per call of `first` and of `second` over `repeats` rounds. A round runs a batch
/// of each in turn, a batch repeating the call until it lasts about `batchSeconds`, so that
/// microsecond operations are not lost in clock noise and a busy moment on the machine weighs on
/// both figures alike.
func measurePair(
  repeats: Int, batchSeconds: Double = 0.02, _ first: () throws -> Void,
  _ second: () throws -> Void
) throws -> (Double, Double) {
  func calls(_ body: () throws -> Void) throws -> Int {
    let start = monotonicSeconds()
    try body()
    let once = max(monotonicSeconds() - start, 1e-7)
    return max(1, min(10_000, Int(batchSeconds / once)))
  }
  func batch(_ body: () throws -> Void, _ count: Int) throws -> Double {
    let start = monotonicSeconds()
    for _ in 0..<count { try body() }
    return (monotonicSeconds() - start) / Double(count)
  }
  let (firstCalls, secondCalls) = (try calls(first), try calls(second))
  var (firstTimes, secondTimes) = ([Double](), [Double]())
  for _ in 0..<repeats {
    firstTimes.append(try batch(first, firstCalls))
    secondTimes.append(try batch(second, secondCalls))
  }
  return (median(firstTimes), median(secondTimes))
}

/// Starts `path` with `arguments` and `environment` (standard streams on /dev/null), waits for
/// it, and returns its wall time, from before posix_spawn to after wait4, and its exit status.
func spawnAndWait(_ path: String, _ arguments: [String], environment: [String: String]) throws
  -> (seconds: Double, status: Int32)
{
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
  let argv = ([path] + arguments).map { strdup($0) } + [nil]
  let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
  defer {
    for pointer in argv + envp { free(pointer) }
  }

  var pid = pid_t()
  let start = monotonicSeconds()
  let code = posix_spawn(&pid, path, &actions, nil, argv, envp)
  guard code == 0 else {
    throw BenchError("cannot start \(path): \(String(cString: strerror(code)))")
  }
  var status: Int32 = 0
  while waitpid(pid, &status, 0) < 0 {
    guard errno == EINTR else { throw BenchError("waitpid failed for \(path)") }
  }
  let seconds = monotonicSeconds() - start
  // WIFEXITED / WEXITSTATUS; a signal counts as status 128 + signal.
  let exitStatus = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
  return (seconds, exitStatus)
}

/// A program with its arguments.
struct Command {
  var path: String
  var arguments: [String]

  var text: String { ([path] + arguments).joined(separator: " ") }
}

/// Median wall time of each command over `repeats` rounds, after one warm-up round. Rounds run
/// every command once in turn, so drift in the machine's speed affects all of them alike. Any
/// exit status but 0 is a failure.
func measureProcesses(_ commands: [Command], environment: [String: String], repeats: Int) throws
  -> [Double]
{
  var times = Array(repeating: [Double](), count: commands.count)
  for round in 0...repeats {
    for (index, command) in commands.enumerated() {
      let run = try spawnAndWait(command.path, command.arguments, environment: environment)
      guard run.status == 0 else {
        throw BenchError("\(command.text) exited with status \(run.status)")
      }
      if round > 0 { times[index].append(run.seconds) }
    }
  }
  return times.map(median)
}

/// The largest peak resident memory of `command` over a few runs, as GNU time measures it (`%M`:
/// wait4 of its own fork); nil without /usr/bin/time. Our own wait4 cannot tell: posix_spawn runs
/// the child on this process's memory until exec (vfork), and Linux carries that memory's
/// high-water mark into the child's ru_maxrss, so every child would look as big as the bench.
func peakResidentBytes(_ command: Command, environment: [String: String], scratch: String)
  throws -> Int?
{
  let time = "/usr/bin/time"
  guard FileManager.default.isExecutableFile(atPath: time) else { return nil }
  let report = scratch + "/peak-memory.txt"
  var peak = 0
  for _ in 0..<3 {
    let run = try spawnAndWait(
      time, ["-f", "%M", "-o", report, command.path] + command.arguments,
      environment: environment)
    let kilobytes = (try? String(contentsOfFile: report, encoding: .utf8))?
      .split(separator: "\n").last.flatMap { Int($0) }
    guard run.status == 0, let kilobytes else {
      throw BenchError("\(time) \(command.text) failed (status \(run.status))")
    }
    peak = max(peak, kilobytes * 1024)
  }
  return peak
}
