import Foundation
import Spawning

public struct ClientError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// What a client program did.
public struct ClientRun {
  public let status: Int32
  public let stdout: String
  public let stderr: String
  public var summary: String {
    "exit \(status)\nstdout: \(stdout.prefix(800))\nstderr: \(stderr.prefix(800))"
  }
}

/// Real HTTP clients nobody here wrote: the curl command and the system Python's http.client.
/// A missing one fails the test (`.ci/run` installs curl, python3 and openssl).
public enum Clients {
  public static func require(_ path: String) throws -> String {
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw ClientError("\(path) is missing: install it (bash .ci/run does)")
    }
    return path
  }

  public static func run(
    _ executable: String, _ arguments: [String], input: Data = Data(), timeout: TimeInterval = 60
  ) throws -> ClientRun {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: try require(executable))
    process.arguments = arguments
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    let done = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in done.signal() }
    try process.run()
    let collected = Collected()
    let readers = DispatchGroup()
    readers.enter()
    DispatchQueue.global().async {
      collected.out = stdout.fileHandleForReading.readDataToEndOfFile()
      readers.leave()
    }
    readers.enter()
    DispatchQueue.global().async {
      collected.err = stderr.fileHandleForReading.readDataToEndOfFile()
      readers.leave()
    }
    try? stdin.fileHandleForWriting.write(contentsOf: input)
    try? stdin.fileHandleForWriting.close()
    if done.wait(timeout: .now() + timeout) == .timedOut {
      process.terminate()
      throw ClientError("\(executable) \(arguments.prefix(4)) did not finish in \(timeout) s")
    }
    readers.wait()
    return ClientRun(
      status: process.terminationStatus, stdout: String(decoding: collected.out, as: UTF8.self),
      stderr: String(decoding: collected.err, as: UTF8.self))
  }

  /// `curl -sS ARGUMENTS…`.
  public static func curl(_ arguments: [String], input: Data = Data()) throws -> ClientRun {
    try run("/usr/bin/curl", ["-sS"] + arguments, input: input)
  }

  /// The system python3 (not a virtual environment's) running `script` with `arguments`.
  public static func python(
    _ script: String, _ arguments: [String] = [], timeout: TimeInterval = 120
  )
    throws -> ClientRun
  {
    try run("/usr/bin/python3", ["-c", script] + arguments, timeout: timeout)
  }
}

/// Each reader writes its own field; they are read after both finish.
private final class Collected: @unchecked Sendable {
  var out = Data()
  var err = Data()
}

/// A temporary directory removed at deinit.
public final class TemporaryDirectory {
  public let path: String
  public init() throws {
    var template = Array((NSTemporaryDirectory() + "/NCMBServerTests.XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw ClientError("mkdtemp failed") }
    path = String(cString: made)
  }
  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A throwaway self-signed certificate for 127.0.0.1, ::1 and localhost, made by the openssl
/// command.
public struct ThrowawayCertificate {
  public let certificateFile: String
  public let keyFile: String

  public init(in directory: String) throws {
    certificateFile = directory + "/cert.pem"
    keyFile = directory + "/key.pem"
    let made = try Clients.run(
      "/usr/bin/openssl",
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", keyFile, "-out", certificateFile, "-days", "2", "-subj", "/CN=localhost",
        "-addext", "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
      ])
    guard made.status == 0 else { throw ClientError("openssl req failed: \(made.summary)") }
  }
}

/// A throwaway certificate authority and a server certificate it signed for 127.0.0.1, ::1 and
/// localhost, made by the openssl command: what a board's owner with a private CA hands its
/// members (`FORUM_CA_FILE`).
public struct ThrowawayAuthority {
  public let authorityFile: String
  public let certificateFile: String
  public let keyFile: String

  public init(in directory: String) throws {
    authorityFile = directory + "/ca.pem"
    let authorityKey = directory + "/ca-key.pem"
    certificateFile = directory + "/server.pem"
    keyFile = directory + "/server-key.pem"
    let request = directory + "/server.csr"
    let extensions = directory + "/server.ext"
    try Data("subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n".utf8).write(
      to: URL(fileURLWithPath: extensions))
    let steps: [[String]] = [
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", authorityKey, "-out", authorityFile, "-days", "2", "-subj",
        "/CN=forum test authority",
      ],
      [
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
        keyFile, "-out", request, "-subj", "/CN=localhost",
      ],
      [
        "x509", "-req", "-in", request, "-CA", authorityFile, "-CAkey", authorityKey,
        "-CAcreateserial", "-out", certificateFile, "-days", "2", "-extfile", extensions,
      ],
    ]
    for step in steps {
      let made = try Clients.run("/usr/bin/openssl", step)
      guard made.status == 0 else { throw ClientError("openssl failed: \(made.summary)") }
    }
  }
}
