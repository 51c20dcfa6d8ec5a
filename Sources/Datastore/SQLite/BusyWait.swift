import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// How a connection waits for another process's write lock: in naps of 1, 1, 2 and 4 ms, then
/// 10 ms, up to a limit, telling `Interrupt.onLongWait` after about a second, and giving up at
/// once on Ctrl-C or when its server stops (`stopped`). The first naps are short because most
/// locks are: a checkpoint starting the log again (`Connection.checkpoint`) holds a writer for
/// a millisecond or two, and a 10 ms nap would be the whole of a served request's time.
enum BusyWait {
  static let nap: Int32 = 10
  private static let firstNaps: [Int32] = [1, 1, 2, 4]

  /// The nap after `count` earlier ones.
  static func nap(after count: Int) -> Int32 {
    count < firstNaps.count ? firstNaps[count] : nap
  }

  /// Milliseconds slept in the first `count` naps.
  static func slept(naps count: Int) -> Int {
    let first = firstNaps.prefix(count).reduce(0) { $0 + Int($1) }
    return first + max(0, count - firstNaps.count) * Int(nap)
  }

  /// Installs the handler on `connection`'s handle; the context is the connection, whose end
  /// takes the handler away (a handle that statements still hold outlives it).
  static func install(on connection: Connection) {
    sqlite3_busy_handler(
      connection.handle, busyHandler, Unmanaged.passUnretained(connection).toOpaque())
  }

  /// True when `connection`'s waits end at once: Ctrl-C was pressed, or its server stops
  /// (`StatementBudget.serverStopping`).
  static func stopped(_ connection: Connection) -> Bool {
    Interrupt.requested || connection.budget?.serverStopping == true
  }

  /// Whether a wait that has napped `count` times may nap again, within `limit` milliseconds;
  /// tells `Interrupt.onLongWait` once, as the wait passes a second.
  static func mayNapAgain(after count: Int, limit: Int) -> Bool {
    let slept = slept(naps: count)
    if Interrupt.requested || slept >= limit { return false }
    if slept < 1000 && slept + Int(nap(after: count)) >= 1000 {
      Interrupt.onLongWait?(.anotherWriter)
    }
    return true
  }

  /// Runs `body` again while it fails with SQLITE_BUSY, in the same naps and up to the same limit.
  /// For statements SQLite fails at once instead of calling the busy handler: switching a new file
  /// to WAL while another process opening it holds its shared lock.
  static func retrying<T>(timeout: TimeInterval = 60, _ body: () throws -> T) throws -> T {
    let limit = max(1, Int(timeout * 1000))
    var count = 0
    while true {
      do {
        return try body()
      } catch let error as SQLiteError where error.primaryCode == SQLITE_BUSY {
        guard mayNapAgain(after: count, limit: limit) else { throw error }
        sqlite3_sleep(nap(after: count))
        count += 1
      }
    }
  }
}

private func busyHandler(_ context: UnsafeMutableRawPointer?, _ count: Int32) -> Int32 {
  guard let context else { return 0 }
  let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
  if BusyWait.stopped(connection) { return 0 }
  let limit = max(1, Int(connection.busyTimeout * 1000))
  guard BusyWait.mayNapAgain(after: Int(count), limit: limit) else { return 0 }
  sqlite3_sleep(BusyWait.nap(after: Int(count)))
  return 1
}

extension Connection {
  /// True when the file at `path` is no longer the one this connection opened: deleted, or
  /// replaced by another (`rm`, `mv`). Writing then would go where nobody will read it.
  var fileHasMoved: Bool {
    var moved: Int32 = 0
    guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK
    else { return false }
    return moved != 0
  }

  /// Refuses a write to a database file that was moved or deleted since it was opened.
  func ensureFileInPlace() throws {
    guard fileHasMoved else { return }
    throw DatastoreError(
      .systemError,
      reason: BoardAccessReason.movedOrDeleted(path: path, nothingWritten: true))
  }
}
