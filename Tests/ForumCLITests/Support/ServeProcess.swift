import Foundation
import HTTPTestSupport
import Spawning

/// `forum serve` running in the background for one test: its ready line read, then stopped by a
/// signal and its exit collected.
final class ServeProcess {
  let process = ChildProcess()
  private let stdoutPipe = Pipe()
  private let stderrPipe = Pipe()
  private let exited = DispatchSemaphore(value: 0)
  private let output = Output()
  /// The first line on stdout.
  private(set) var readyLine = ""

  /// Starts `forum --db DB serve ARGUMENTS…` (DB: `database`, else the fixture's) and waits for its first line (or its exit).
  init(
    _ forum: ForumFixture, _ arguments: [String], lang: String = "C", global: [String] = [],
    timeout: TimeInterval = 60, database: String? = nil
  ) throws {
    process.executableURL = URL(fileURLWithPath: forum.binary)
    process.arguments = ["--db", database ?? forum.db] + global + ["serve"] + arguments
    process.environment = forum.environment(lang: lang)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdoutPipe
    process.standardError = stderrPipe
    let exited = self.exited
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    let output = self.output
    stdoutPipe.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      output.append(data, toStdout: true)
    }
    stderrPipe.fileHandleForReading.readabilityHandler = { handle in
      output.append(handle.availableData, toStdout: false)
    }
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if let line = output.firstLine {
        readyLine = line
        return
      }
      if !process.isRunning { break }
      usleep(10_000)
    }
    if process.isRunning { process.terminate() }
    throw ClientError("forum serve printed no ready line: \(stdout) / \(stderr)")
  }

  deinit {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      exited.wait()
    }
  }

  var stdout: String { output.text(stdout: true) }
  var stderr: String { output.text(stdout: false) }

  /// The URL the ready line names (`https://127.0.0.1:PORT/2013-09-01/`).
  var url: String {
    readyLine.split(separator: " ").first { $0.hasPrefix("http") }.map(String.init) ?? ""
  }
  var port: Int {
    Int(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0
  }

  /// Sends `signal` and waits for the exit; returns its status (nil: still running at timeout).
  func stop(_ signal: Int32 = SIGTERM, timeout: TimeInterval = 60) -> Int32? {
    kill(process.processIdentifier, signal)
    return waitForExit(timeout: timeout)
  }

  func waitForExit(timeout: TimeInterval) -> Int32? {
    guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
    exited.signal()
    // What was written just before the exit.
    usleep(50_000)
    return process.terminationStatus
  }
}

private final class Output: @unchecked Sendable {
  private let lock = NSLock()
  private var out = Data()
  private var err = Data()

  func append(_ data: Data, toStdout: Bool) {
    lock.withLock {
      if toStdout { out.append(data) } else { err.append(data) }
    }
  }

  func text(stdout: Bool) -> String {
    lock.withLock { String(decoding: stdout ? out : err, as: UTF8.self) }
  }

  var firstLine: String? {
    lock.withLock {
      guard let end = out.firstIndex(of: 10) else { return nil }
      return String(decoding: out[..<end], as: UTF8.self)
    }
  }
}

extension FileHandle {
  /// What a client process has written once its first newline has come (all of it if it closed
  /// its output first; bytes after the newline that came in the same read are kept): the tests'
  /// clients say with one line when they are mid-way.
  func firstLine() -> String {
    var line = Data()
    while !line.contains(10) {
      let more = availableData
      if more.isEmpty { break }
      line += more
    }
    return String(decoding: line, as: UTF8.self)
  }
}
