import Foundation
import Spawning
import Synchronization
import Testing

/// The tests' own way to start processes. Foundation's `Process.run()` crashed the whole test
/// process (SIGSEGV in memmove) when a thousand or more descriptors were open: it reads each
/// `/proc/self/fd` entry 256 bytes at a time past glibc's buffer.
@Suite struct ChildProcessTests {
  /// Runs `arguments[0]` with the rest, its output on a pipe.
  private func output(
    _ arguments: [String], input: String? = nil, directory: String? = nil,
    environment: [String: String]? = nil
  ) throws -> (status: Int32, reason: ChildProcess.TerminationReason, text: String) {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.environment = environment
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let stdin = Pipe()
    process.standardInput = input == nil ? nil : stdin
    try process.run()
    if let input {
      try stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
      try stdin.fileHandleForWriting.close()
    }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, process.terminationReason, text)
  }

  @Test func withTwoThousandDescriptorsOpenChildrenStartAndInheritNone() throws {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < 4096 {
      limit.rlim_cur = min(limit.rlim_max, 4096)
      setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
    let marker = NSTemporaryDirectory() + "child-process-marker-\(getpid())"
    #expect(FileManager.default.createFile(atPath: marker, contents: Data()))
    defer { try? FileManager.default.removeItem(atPath: marker) }
    // More than fill glibc's 32 KB directory buffer (about 1,360 short entries).
    var opened: [Int32] = []
    defer { for descriptor in opened { close(descriptor) } }
    for _ in 0..<2000 {
      let descriptor = open(marker, O_RDONLY)
      try #require(descriptor >= 0, "open: \(String(cString: strerror(errno)))")
      opened.append(descriptor)
    }
    for _ in 0..<30 {
      let run = try output(["/bin/ls", "-l", "/proc/self/fd/"])
      #expect(run.status == 0, "\(run.text)")
      #expect(!run.text.contains(marker), "a descriptor of ours reached the child")
      // ls sees its three streams and the directory it lists.
      #expect(run.text.split(separator: "\n").count <= 6, "\(run.text)")
    }
  }

  @Test func exitStatusesAndSignalsAreTold() throws {
    let exited = try output(["/bin/sh", "-c", "exit 7"])
    #expect(exited.status == 7 && exited.reason == .exit)
    let killed = try output(["/bin/sh", "-c", "kill -TERM $$"])
    #expect(killed.status == SIGTERM && killed.reason == .uncaughtSignal)
  }

  @Test func inputDirectoryAndEnvironmentReachTheChild() throws {
    #expect(try output(["/bin/cat"], input: "through the pipe\n").text == "through the pipe\n")
    #expect(try output(["/bin/cat"]).text == "", "no input is /dev/null, not ours")
    let directory = NSTemporaryDirectory()
    let pwd = try output(["/bin/pwd"], directory: directory).text
    #expect(
      URL(fileURLWithPath: pwd.trimmingCharacters(in: .newlines)).standardizedFileURL.path
        == URL(fileURLWithPath: directory).standardizedFileURL.path)
    let env = try output(["/usr/bin/env"], environment: ["ONLY": "this"]).text
    #expect(env == "ONLY=this\n")
  }

  @Test func aMissingProgramIsAnErrorNotACrash() {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/nonexistent/forum")
    #expect(throws: ChildProcessError.self) { try process.run() }
  }

  @Test func aRunningChildIsTerminatedAndItsHandlerCalledOnce() throws {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/bin/sleep")
    process.arguments = ["30"]
    process.standardInput = nil
    let calls = Calls()
    process.terminationHandler = { _ in calls.add() }
    try process.run()
    #expect(process.isRunning && process.processIdentifier > 0)
    process.terminate()
    process.waitUntilExit()
    #expect(!process.isRunning)
    #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
    #expect(calls.count == 1)
  }

  /// Nothing in the package starts a process with Foundation's `Process` again.
  @Test func noTestOrToolUsesFoundationsProcess() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let needle = try Regex("(^|[^A-Za-z])" + "Process" + #"\(\)"#)
    var found: [String] = []
    for folder in ["Sources", "Tests"] {
      let base = root.appendingPathComponent(folder)
      guard let files = FileManager.default.enumerator(atPath: base.path) else { continue }
      for case let file as String in files where file.hasSuffix(".swift") {
        let text = try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8)
        if text.contains(needle) { found.append(folder + "/" + file) }
      }
    }
    #expect(found.isEmpty, "use Spawning's ChildProcess: \(found)")
  }
}

private final class Calls: Sendable {
  private let counted = Mutex(0)
  func add() { counted.withLock { $0 += 1 } }
  var count: Int { counted.withLock { $0 } }
}
