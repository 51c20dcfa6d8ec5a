import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// How a connection waits for another process's write lock: in 10 ms naps up to a limit, telling
/// `Interrupt.onLongWait` after about a second, and giving up at once on Ctrl-C.
enum BusyWait {
  static let nap: Int32 = 10

  /// Installs the handler; `timeout` is carried in the context pointer, as milliseconds.
  static func install(on handle: OpaquePointer, timeout: TimeInterval) {
    let naps = max(1, Int(timeout * 1000) / Int(nap))
    sqlite3_busy_handler(handle, busyHandler, UnsafeMutableRawPointer(bitPattern: naps))
  }

  /// Runs `body` again while it fails with SQLITE_BUSY, in the same naps and up to the same limit.
  /// For statements SQLite fails at once instead of calling the busy handler: switching a new file
  /// to WAL while another process opening it holds its shared lock.
  static func retrying<T>(timeout: TimeInterval = 60, _ body: () throws -> T) throws -> T {
    let naps = max(1, Int(timeout * 1000) / Int(nap))
    var count = 0
    while true {
      do {
        return try body()
      } catch let error as SQLiteError where error.primaryCode == SQLITE_BUSY {
        if Interrupt.requested || count >= naps { throw error }
        if count == 1000 / Int(nap) { Interrupt.onLongWait?() }
        count += 1
        sqlite3_sleep(nap)
      }
    }
  }
}

private func busyHandler(_ context: UnsafeMutableRawPointer?, _ count: Int32) -> Int32 {
  let limit = Int(bitPattern: context)
  if Interrupt.requested || Int(count) >= limit { return 0 }
  if Int(count) == 1000 / Int(BusyWait.nap) { Interrupt.onLongWait?() }
  sqlite3_sleep(BusyWait.nap)
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
