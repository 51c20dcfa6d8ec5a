#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The mobile backend: objects with ACLs, anonymous users with sessions, a file store, over one of
/// the engines (`Datastore.open(_:)`). Open one per database; hand out a `DatastoreClient` per
/// signed-in caller. Nothing here passes the ACL: there is no public master key.
public final class Datastore {
  /// Largest file `putFile` accepts, in bytes (`E413001` above it): the limit asked for when
  /// opening, never above the board's own 5 MB, which a server holds whatever a client asks.
  public let fileSizeLimit: Int
  /// How long a session stays valid after login.
  public let sessionLifetime: TimeInterval
  let engine: any DatastoreEngine

  public static let defaultFileSizeLimit = 5 * 1024 * 1024
  /// Thirty days.
  public static let defaultSessionLifetime: Double = 30 * 24 * 3600

  /// What the datastore was opened on: a path or a URI (without its password).
  public var location: String { engine.location }
  /// The database's random id (see `DatastoreEngine.boardId`).
  public var boardId: String { engine.boardId }
  /// The engine's clock, milliseconds since 1970 (a server telling a remote engine its time).
  @_spi(Server)
  public func now() throws -> Int64 { try engine.now() }

  /// An https board's id and keys as its engine signs with them (for the profile to keep);
  /// nil on a local or PostgreSQL board.
  public var remoteKeys: RemoteBoardKeys? { (engine as? RemoteEngine)?.boardKeys }

  /// The rules the engine enforces.
  public var rules: EngineRules { engine.rules }

  init(
    engine: any DatastoreEngine, rules: EngineRules, indexes: [IndexSpec], fileSizeLimit: Int,
    sessionLifetime: TimeInterval
  ) throws {
    try engine.prepare(rules: rules, indexes: indexes)
    self.engine = engine
    self.fileSizeLimit = min(fileSizeLimit, Datastore.defaultFileSizeLimit)
    self.sessionLifetime = sessionLifetime
  }

  /// The SQLite file at `path` (tests and tools that know they want SQLite).
  convenience init(
    path: String, rules: EngineRules = EngineRules(), indexes: [IndexSpec] = [],
    fileSizeLimit: Int = Datastore.defaultFileSizeLimit,
    sessionLifetime: TimeInterval = Datastore.defaultSessionLifetime
  ) throws {
    try self.init(
      engine: try SQLiteEngine(path: path), rules: rules, indexes: indexes,
      fileSizeLimit: fileSizeLimit, sessionLifetime: sessionLifetime)
  }

  /// A client acting with the session `token`. An unknown or expired token is `E401001`;
  /// no token gives a caller without a session (the public principal only).
  public func client(sessionToken token: String?) throws -> DatastoreClient {
    try client(sessionToken: token, known: nil)
  }

  /// `client(sessionToken:)` for a caller that took `known` from `stateMark()` and knows that
  /// nothing was committed since (a server that is the only writer): the engine does not look
  /// at the database's state again to trust what it remembers of the session.
  public func client(sessionToken token: String?, known: StateMark?) throws -> DatastoreClient {
    guard let token else { return DatastoreClient(store: self, principals: .anonymous) }
    guard let principals = try engine.caller(sessionToken: token, known: known) else {
      throw DatastoreError(.authentication)
    }
    return DatastoreClient(store: self, principals: principals)
  }

  /// The database's state as this datastore's connection sees it (`DatastoreEngine.stateMark`):
  /// what was read at one mark may be given again while the mark is the same. Nil on an engine
  /// that cannot tell (PostgreSQL); `E500001` when the database is gone.
  public func stateMark() throws -> StateMark? {
    try engine.stateMark()
  }

  /// The objects written after the feed's number `sequence` (`StateMark.feed`), at most
  /// `limit`: what a server's kept answers may depend on. Nil when they cannot all be told
  /// (pruned, more than `limit`, an engine without marks): then forget everything.
  public func writtenObjects(after sequence: Int64, limit: Int) throws -> [WrittenObject]? {
    try engine.writtenObjects(after: sequence, limit: limit)
  }

  /// Throws `E500001` when the database is gone (SQLite: the file was removed or replaced since
  /// it was opened). A `stat`: far cheaper than `stateMark()`.
  public func checkInPlace() throws {
    try engine.checkInPlace()
  }

  /// One bounded step of the index upkeep the engine keeps off every commit (SQLite: indexing
  /// at most `SQLiteSearch.pendingBatch` rows that commits queued, or a merge of at most
  /// `SQLiteSearch.mergePages` pages of the full-text index), in its own transaction: callers
  /// run it between writes (a script between commands, a server between batches) and, with
  /// `idle`, when nothing waits (the prompt, a one-shot's exit, a server with no write queued).
  /// On SQLite it also copies the log into the database once it passes 1,000 pages (or, with
  /// `idle`, whatever it holds), which SQLite would otherwise do inside a commit.
  /// True when it did work and more may be left. It changes no answer: search reads the rows
  /// still queued directly; a kill in the middle rolls the step back whole. A lock held by
  /// another writer makes it do nothing (false).
  public func tidy(idle: Bool = false) -> Bool {
    (try? engine.tidy(idle: idle)) ?? false
  }

  /// Rows this datastore's connection has written since it opened: a server tells by it that
  /// a request wrote. Costs nothing (no statement); 0 on PostgreSQL.
  public var ownChanges: Int64 { engine.ownChanges }

  /// Limits every statement this datastore runs from now on, as the budget says while it is
  /// armed (a server arms it for each request: a time limit, its client hanging up, a stop).
  /// A stopped statement fails with `E500001` whose reason is a `StatementStop`; nothing of its
  /// write is kept. nil: no limit. The remote engine has no statements of its own.
  public var statementBudget: StatementBudget? {
    get {
      (engine as? SQLiteEngine)?.connection.budget ?? (engine as? PostgresEngine)?.connection.budget
    }
    set {
      (engine as? SQLiteEngine)?.connection.budget = newValue
      (engine as? PostgresEngine)?.connection.budget = newValue
    }
  }

  /// True when `group` makes several writes one transaction and one commit (SQLite, whose
  /// writers otherwise wait for its lock in the busy handler's 10 ms naps; PostgreSQL, whose
  /// writers to one thread otherwise wait for its row, one commit at a time): a server with
  /// several connections should queue its own writers and write them in batches.
  public var commitsInGroups: Bool { engine is SQLiteEngine || engine is PostgresEngine }

  /// Group commit: runs `write(0)`, …, `write(count - 1)`, each atomically and undone alone
  /// when it throws (its error is returned at its index; nil: written), and makes them durable
  /// together: on SQLite one transaction and one commit for all. When this returns, every write
  /// without an error is committed; when it throws (the transaction could not begin or commit),
  /// none is. A write must not answer anyone before this returns. The server's alone: an
  /// application's writes are `WriteOperation`s.
  @_spi(Server)
  public func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    try engine.group(count, write)
  }

  /// Runs `body` atomically: in a transaction, or a savepoint of the one running (a request
  /// of NCMB's `batch`), undone when it throws. The server's alone (NCMB's batch): an
  /// application's writes are `WriteOperation`s.
  @_spi(Server)
  public func atomically<T>(_ body: () throws -> T) throws -> T {
    try engine.transaction(body)
  }

  /// Sets this datastore's connection up to be one of a server's pool. SQLite: with
  /// `checkpointsApart`, a commit no longer copies the log into the database itself (the
  /// checkpoint's two `fdatasync`s held the write queue for up to 40 ms): whoever asks for it
  /// must call `checkpoint()` after commits, from elsewhere. PostgreSQL: nothing.
  public func serve(checkpointsApart: Bool) throws {
    try engine.serve(checkpointsApart: checkpointsApart)
  }

  /// SQLite: `tidy` no longer copies the log into the database itself; it tells `note` that
  /// something was committed, for a checkpoint on another connection (a script's
  /// `Checkpointer`). nil: `tidy` checkpoints again, and what the log holds is copied now (the
  /// file alone then has every commit, as after any run). Elsewhere: nothing.
  public func checkpointElsewhere(_ note: (@Sendable () -> Void)?) {
    guard let engine = engine as? SQLiteEngine else { return }
    engine.checkpointNote = note
    if note == nil { try? engine.checkpoint() }
  }

  /// SQLite: copies what was committed to the log (WAL) into the database as far as no reader
  /// still needs the older pages, without waiting for readers or writers (a passive
  /// checkpoint). PostgreSQL: nothing.
  public func checkpoint() throws {
    try engine.checkpoint()
  }

  /// The client a login signed in.
  public func client(_ login: Login) -> DatastoreClient {
    DatastoreClient(store: self, principals: login.principals)
  }

  /// Passes every ACL and every API check (the triggers still run). Internal: for tests that
  /// plant rows a client never could, and the two owner's reads of users that must see every
  /// user (`users(named:)`, `hasUsers`), which return ids alone. Whoever holds an SQLite file
  /// can do as much with `sqlite3`; on PostgreSQL the connection's own rights still hold.
  /// Nothing in Forum or ForumCLI can reach it.
  var master: DatastoreClient { DatastoreClient(store: self, principals: .master) }

  /// Makes `userId` a member of `role`. Administration: callers decide who may do it (on
  /// PostgreSQL only the database owner can).
  public func addMember(_ userId: String, toRole role: String) throws {
    guard Validation.isRoleName(role) else { throw DatastoreError.invalid("role") }
    guard Validation.isObjectId(userId) else { throw DatastoreError.invalid("userId") }
    try engine.addMember(userId, toRole: role)
  }
}
