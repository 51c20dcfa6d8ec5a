#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

extension SQLiteEngine {
  /// Why `path` cannot hold a database, checked before SQLite opens it: its directory is
  /// missing, it names a directory, or it is a FIFO, device or socket (SQLite would block on a
  /// FIFO, and as root would leave `/dev/null-journal` beside a device). Nil when it may.
  static func refusal(forDatabaseAt path: String) -> DatastoreError? {
    if path.isEmpty || path.hasSuffix("/") {
      return DatastoreError(
        .systemError, reason: BoardAccessReason.namesDirectory(path: path))
    }
    // Not NSString.deletingLastPathComponent: it traps on some short relative paths.
    let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    var info = stat()
    if !directory.isEmpty, stat(directory, &info) != 0 || info.st_mode & S_IFMT != S_IFDIR {
      return DatastoreError(
        .systemError, reason: BoardAccessReason.directoryMissing(path: path, directory: directory))
    }
    guard stat(path, &info) == 0 else { return nil }  // SQLite creates it
    switch info.st_mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR:
      return DatastoreError(.systemError, reason: BoardAccessReason.isDirectory(path: path))
    default:
      return DatastoreError(
        .systemError, reason: BoardAccessReason.notRegularFile(path: path))
    }
  }
}
