import CSpawn
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Where a child's standard input, output or error goes: a `Pipe` (the child gets its far end)
/// or a `FileHandle` (`FileHandle.nullDevice`, a file, or one of our own standard streams).
public protocol ChildStream: Sendable {}
extension Pipe: ChildStream {}
extension FileHandle: ChildStream {}

/// A child process started with `posix_spawn`: the tests' and the benchmark's way to run
/// `forum`, its clients and tools, with the part of Foundation's `Process` interface they use.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` and copies each entry's
/// whole 256-byte name field, reading past glibc's directory buffer when a thousand or more
/// descriptors fill it (swift-corelibs-foundation #5472, not in Swift 6.3). A test process with
/// many sockets open crashed there (`Process.run`, SIGSEGV in memmove). Here the child closes
/// every descriptor from 3 up in one file action (`posix_spawn_file_actions_addclosefrom_np`).
public final class ChildProcess: Sendable {
  public enum TerminationReason: Sendable { case exit, uncaughtSignal }

  private struct Settings: Sendable {
    var executableURL: URL?
    var arguments: [String] = []
    var environment: [String: String]?
    var currentDirectoryURL: URL?
    var standardInput: (any ChildStream)? = FileHandle.standardInput
    var standardOutput: (any ChildStream)? = FileHandle.standardOutput
    var standardError: (any ChildStream)? = FileHandle.standardError
    var terminationHandler: (@Sendable (ChildProcess) -> Void)?
  }

  private struct State: Sendable {
    var processIdentifier: pid_t = 0
    var exit: (status: Int32, reason: TerminationReason)?
  }

  private let settings = Mutex(Settings())
  private let state = Mutex(State())
  /// Entered when the child starts, left when it has been reaped.
  private let running = DispatchGroup()

  public init() {}

  public var executableURL: URL? {
    get { settings.withLock { $0.executableURL } }
    set { settings.withLock { $0.executableURL = newValue } }
  }
  public var arguments: [String]? {
    get { settings.withLock { $0.arguments } }
    set { settings.withLock { $0.arguments = newValue ?? [] } }
  }
  /// The child's whole environment; nil passes ours on.
  public var environment: [String: String]? {
    get { settings.withLock { $0.environment } }
    set { settings.withLock { $0.environment = newValue } }
  }
  public var currentDirectoryURL: URL? {
    get { settings.withLock { $0.currentDirectoryURL } }
    set { settings.withLock { $0.currentDirectoryURL = newValue } }
  }
  /// Our own standard input unless set; nil is /dev/null.
  public var standardInput: (any ChildStream)? {
    get { settings.withLock { $0.standardInput } }
    set { settings.withLock { $0.standardInput = newValue } }
  }
  public var standardOutput: (any ChildStream)? {
    get { settings.withLock { $0.standardOutput } }
    set { settings.withLock { $0.standardOutput = newValue } }
  }
  public var standardError: (any ChildStream)? {
    get { settings.withLock { $0.standardError } }
    set { settings.withLock { $0.standardError = newValue } }
  }
  /// Called once, on the thread that reaped the child.
  public var terminationHandler: (@Sendable (ChildProcess) -> Void)? {
    get { settings.withLock { $0.terminationHandler } }
    set { settings.withLock { $0.terminationHandler = newValue } }
  }

  public var processIdentifier: Int32 { state.withLock { $0.processIdentifier } }
  public var isRunning: Bool { state.withLock { $0.processIdentifier != 0 && $0.exit == nil } }

  /// The exit status, or the signal that ended it (`terminationReason` says which).
  public var terminationStatus: Int32 {
    guard let exit = state.withLock({ $0.exit }) else { preconditionFailure("still running") }
    return exit.status
  }
  public var terminationReason: TerminationReason {
    guard let exit = state.withLock({ $0.exit }) else { preconditionFailure("still running") }
    return exit.reason
  }

  public func waitUntilExit() { running.wait() }
  public func terminate() { signal(SIGTERM) }
  public func interrupt() { signal(SIGINT) }

  private func signal(_ number: Int32) {
    let pid = processIdentifier
    if pid > 0 && isRunning { kill(pid, number) }
  }

  public func run() throws {
    let settings = settings.withLock { $0 }
    guard let path = settings.executableURL?.path, access(path, X_OK) == 0 else {
      throw ChildProcessError(
        "\(settings.executableURL?.path ?? "no executable"): \(String(cString: strerror(errno)))")
    }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let streams = [settings.standardInput, settings.standardOutput, settings.standardError]
    for (target, stream) in streams.enumerated() {
      let target = Int32(target)
      let null = stream == nil || (stream as? FileHandle) === FileHandle.nullDevice
      switch stream {
      case let pipe as Pipe:
        let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
        posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
      case _ where null:
        let mode = target == 0 ? O_RDONLY : O_WRONLY
        posix_spawn_file_actions_addopen(&actions, target, "/dev/null", mode, 0)
      case let handle as FileHandle where handle.fileDescriptor != target:
        posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
      default:
        break  // our own stream, inherited as it is
      }
    }
    // Every other descriptor of ours (sockets, boards, other children's pipes) stays here.
    cspawn_addclosefrom(&actions, 3)
    if let directory = settings.currentDirectoryURL?.path {
      cspawn_addchdir(&actions, directory)
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // Its own process group, as Process did (a ^C at the test runner is not the child's), and
    // no signal blocked whatever the spawning thread had blocked.
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))

    let environment = settings.environment ?? ProcessInfo.processInfo.environment
    let argv = CStrings([path] + settings.arguments)
    let envp = CStrings(environment.map { "\($0.key)=\($0.value)" })
    var spawned = pid_t()
    let failed = posix_spawn(&spawned, path, &actions, &attributes, argv.pointers, envp.pointers)
    let pid = spawned
    guard failed == 0 else {
      throw ChildProcessError("\(path): \(String(cString: strerror(failed)))")
    }
    // The child's ends are the child's: its reader sees the end of input when it closes them.
    for (target, stream) in streams.enumerated() {
      guard let pipe = stream as? Pipe else { continue }
      try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close()
    }
    running.enter()
    state.withLock { $0.processIdentifier = pid }
    Thread.detachNewThread { [self] in reap(pid, then: settings.terminationHandler) }
  }

  private func reap(_ pid: pid_t, then handler: (@Sendable (ChildProcess) -> Void)?) {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    // WIFSIGNALED / WTERMSIG / WEXITSTATUS are macros Swift does not import.
    let signal = status & 0x7f
    let exit: (Int32, TerminationReason) =
      signal != 0 ? (signal, .uncaughtSignal) : ((status >> 8) & 0xff, .exit)
    state.withLock { $0.exit = exit }
    handler?(self)
    running.leave()
  }
}

public struct ChildProcessError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}

/// A NULL-terminated array of C strings, freed with it.
private final class CStrings {
  let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
  private let count: Int

  init(_ strings: [String]) {
    count = strings.count
    pointers = .allocate(capacity: count + 1)
    for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
    pointers[count] = nil
  }

  deinit {
    for index in 0..<count { free(pointers[index]) }
    pointers.deallocate()
  }
}
