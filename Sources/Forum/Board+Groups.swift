@_spi(Server) import Datastore

extension Board {
  /// True when `group` commits several writes at once (a local SQLite file or a PostgreSQL
  /// database; not an https board, whose server groups what it receives itself).
  public var commitsInGroups: Bool { store.commitsInGroups }

  /// Group commit for a script's lines that were already waiting (`CommandLoop`): runs
  /// `write(0)`, …, `write(count - 1)`, each undone alone when it throws (its error at its
  /// index; nil: written), all committed together. When this returns, every write without an
  /// error is committed; when it throws, none is, and nothing any of them did may be told as
  /// done. A write may be run again when the engine lost the transaction under it.
  public func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    try store.group(count, write)
  }
}
