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

  /// Why nothing seems to happen.
  public enum Wait: Sendable {
    /// A write has waited about a second for another process's lock.
    case anotherWriter
    /// A large board's file is being brought up to this version (`SQLiteSchema`): once, seconds.
    case upgrade
  }

  /// Called once when a write has waited about a second for another process's lock, or before a
  /// long upgrade of the board's file, so a person is told why nothing happens (the datastore
  /// itself never prints). Bound by whoever waits (`Interrupt.withLongWait`) for its own thread
  /// only: a server's worker threads, which do not inherit it, never say the prompt's sentence.
  public static var onLongWait: (@Sendable (Wait) -> Void)? {
    guard let box = pthread_getspecific(longWaitKey) else { return nil }
    return Unmanaged<LongWait>.fromOpaque(box).takeUnretainedValue().action
  }

  /// Runs `body` with `onLongWait` set to `action` on this thread.
  public static func withLongWait<T>(
    _ action: @escaping @Sendable (Wait) -> Void, _ body: () throws -> T
  ) rethrows -> T {
    let box = Unmanaged.passRetained(LongWait(action))
    let outer = pthread_getspecific(longWaitKey)
    pthread_setspecific(longWaitKey, box.toOpaque())
    defer {
      pthread_setspecific(longWaitKey, outer)
      box.release()
    }
    return try body()
  }

  /// A thread's own value through a pthread key, not a `@TaskLocal`: pushing a task-local
  /// outside any task crashed the statically linked release `forum` at its first line
  /// (`swift_task_localValuePush`, Swift 6.3.1).
  private final class LongWait: Sendable {
    let action: @Sendable (Wait) -> Void
    init(_ action: @escaping @Sendable (Wait) -> Void) { self.action = action }
  }
  private static let longWaitKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()

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
