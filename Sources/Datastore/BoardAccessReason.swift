/// Why a board cannot be opened or kept open: the file or the server under it, not a rule of the
/// board. A value with its arguments, so that the CLI says it whole in the reader's language;
/// `description` is the English. A library's own message (libpq's, strerror's) stays as the
/// library wrote it.
public enum BoardAccessReason: ErrorReason, Equatable {
  // SQLite: the path and the file.
  case namesDirectory(path: String)
  case directoryMissing(path: String, directory: String)
  case isDirectory(path: String)
  case notRegularFile(path: String)
  case readOnly(path: String)
  case anotherProgramsDatabase(path: String)
  case noWAL(path: String)
  case notSQLite(path: String)
  case cannotOpen(path: String)
  case damaged(path: String)
  case diskFull(path: String)
  /// The file was set up by a newer forum: its rules format or its schema version.
  case newerRules(path: String, format: Int)
  case newerSchema(path: String, version: Int)
  /// The file was moved or deleted while open; `nothingWritten` when a write was refused.
  case movedOrDeleted(path: String, nothingWritten: Bool)
  /// A profile's directory could not be made (`error`: the system's words).
  case cannotCreateDirectory(path: String, error: String)
  // PostgreSQL: the library, the server, the schema.
  case libpqMissing(error: String)
  case serverUnreachable(error: String)
  case loginRefused(error: String)
  case notForumMember(role: String)
  case noForumSchema(database: String)
  case newerPostgresSchema(version: Int)
  case schemaMissing
  case connectionLost(error: String)

  public var description: String {
    switch self {
    case .namesDirectory(let path): return "\(path) names a directory, not a database file"
    case .directoryMissing(let path, let directory):
      return "cannot open database \(path): directory \(directory) does not exist"
    case .isDirectory(let path): return "\(path) is a directory, not a database file"
    case .notRegularFile(let path):
      return "\(path) is not a regular file (a FIFO, device or socket)"
    case .readOnly(let path): return "database \(path) is read-only"
    case .anotherProgramsDatabase(let path):
      return "\(path) is an SQLite database of another program"
    case .noWAL(let path): return "database \(path) cannot use WAL mode"
    case .notSQLite(let path): return "\(path) is not a forum database (not an SQLite file)"
    case .cannotOpen(let path): return "cannot open database \(path)"
    case .damaged(let path): return "database \(path) is damaged"
    case .diskFull(let path): return "the disk holding \(path) is full"
    case .newerRules(let path, let format):
      return "\(path) was set up by a newer forum (rules \(format)); upgrade forum"
    case .newerSchema(let path, let version):
      return "\(path) was written by a newer forum (schema \(version))"
    case .movedOrDeleted(let path, let nothingWritten):
      return "the database file \(path) was moved or deleted while forum had it open"
        + (nothingWritten ? "; nothing was written" : "")
    case .cannotCreateDirectory(let path, let error): return "cannot create \(path): \(error)"
    case .libpqMissing(let error):
      return "PostgreSQL boards need libpq, which cannot be loaded (\(error)); "
        + "install libpq5 (Debian: apt-get install libpq5)"
    case .serverUnreachable(let error):
      return "cannot reach the PostgreSQL server (\(error)); check the host and port in --db"
    case .loginRefused(let error):
      return "the PostgreSQL server refused the login (\(error)); check the user name and "
        + "password, or ask the board's owner to add you"
    case .notForumMember(let role):
      return "role \(role) is not a member of forum_member: ask the board's owner to run "
        + "`GRANT forum_member TO \(role)`"
    case .noForumSchema(let database):
      return "database \(database) has no forum schema: run `forum init --db URI` as the "
        + "database owner"
    case .newerPostgresSchema(let version):
      return "the forum schema is newer (version \(version)) than this forum: upgrade forum"
    case .schemaMissing:
      return "the forum schema is missing: run `forum init` as the database owner"
    case .connectionLost(let error):
      return "lost the connection to the PostgreSQL server (\(error)); start forum again"
    }
  }
}
