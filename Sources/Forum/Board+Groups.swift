@_spi(Server) import Datastore

extension Board {
  /// True when a script's waiting lines may be committed as one group (`group`): a local SQLite
  /// file, whose one writer holds the whole database's lock for the group, so no other writer
  /// waits on a row it took. Not PostgreSQL: a group keeps the rows its earlier lines locked
  /// until it commits, and two scripts commenting on the same threads in other orders deadlocked
  /// again at each retry of the one line PostgreSQL gave up (minutes, lines refused). Not an
  /// https board, whose server groups what it receives itself.
  public var groupsScriptLines: Bool { EngineKind(location: store.location) == .sqlite }

  /// Group commit for a script's lines that were already waiting (`CommandLoop`): runs
  /// `write(0)`, …, `write(count - 1)`, each undone alone when it throws (its error at its
  /// index; nil: written), all committed together. When this returns, every write without an
  /// error is committed; when it throws, none is, and nothing any of them did may be told as
  /// done. A write may be run again when the engine lost the transaction under it.
  public func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    try store.group(count, write)
  }

  /// A script's checkpoints on another connection (`Datastore.checkpointElsewhere`): `tidy`
  /// tells `note` that something was committed. nil: `tidy` checkpoints again, and what the log
  /// holds is copied now.
  public func checkpointElsewhere(_ note: (@Sendable () -> Void)?) {
    store.checkpointElsewhere(note)
  }
}
