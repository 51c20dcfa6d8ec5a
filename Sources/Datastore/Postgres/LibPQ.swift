import CLibPQ

/// libpq, loaded on first use: only a `postgresql://` board needs it, and linking it would make
/// every command (SQLite boards, `--version`) load its 37 shared libraries at start.
enum LibPQ {
  /// The names tried, in order: the runtime library (Debian's libpq5), then the development link.
  static let libraryNames = ["libpq.so.5", "libpq.so", "libpq.5.dylib", "libpq.dylib"]

  /// Loaded once per process; a failure is remembered too (the library will not appear later).
  private static let loaded: Result<ForumLibPQ, DatastoreError> = Result {
    () throws(DatastoreError) in try load(names: libraryNames)
  }

  /// libpq's functions, or `E500001` saying to install libpq5.
  static func functions() throws -> ForumLibPQ {
    try loaded.get()
  }

  /// The first of `names` that loads and has every function the engine calls.
  static func load(names: [String]) throws(DatastoreError) -> ForumLibPQ {
    var reasons: [String] = []
    var reason = [CChar](repeating: 0, count: 512)
    for name in names {
      if let table = forum_libpq_load(name, &reason, UInt(reason.count)) { return table.pointee }
      reasons.append(String(cString: reason))
    }
    throw DatastoreError(
      .systemError,
      reason: BoardAccessReason.libpqMissing(error: reasons.first ?? "not found"))
  }
}
