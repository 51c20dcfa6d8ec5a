#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Ctrl-C for long work. The program's SIGINT handler calls `request()`; work that can take long
/// (a lock wait, a listing, an image decode) polls `requested` or calls `check()` and stops,
/// leaving nothing half-written. The prompt clears it before each command.
public enum Interrupt {
  /// Set from a signal handler, so only a plain word is written there.
  nonisolated(unsafe) private static var flag: sig_atomic_t = 0

  /// Called once when a write has waited about a second for another process's lock, so a person
  /// is told why nothing happens (the datastore itself never prints). Bound by whoever waits
  /// (`Interrupt.$onLongWait.withValue`) for its own work only: a server's worker threads, which
  /// do not inherit it, never say the prompt's sentence.
  @TaskLocal public static var onLongWait: (@Sendable () -> Void)?

  /// True once Ctrl-C was pressed since the last `clear()`.
  public static var requested: Bool { flag != 0 }

  /// Async-signal-safe: only stores a flag.
  public static func request() { flag = 1 }

  public static func clear() { flag = 0 }

  /// Throws `Interrupted` when Ctrl-C was pressed.
  public static func check() throws {
    if flag != 0 { throw Interrupted() }
  }
}

/// Work stopped by Ctrl-C; nothing was written.
public struct Interrupted: Error, CustomStringConvertible {
  public init() {}
  public var description: String { "interrupted" }
}
