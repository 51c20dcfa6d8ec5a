import Datastore

/// The database as the server's connections see it: looked at before a request is answered
/// (what other processes wrote since, for the read cache and the session), and told of this
/// server's own commits.
struct DatabaseState: Sendable {
  let pool: StorePool
  let feed: FeedWatcher
  /// Milliseconds since 1970 (tests move it).
  let clock: @Sendable () -> Int64
  /// How old a look may be before the next request looks again (`NCMBService.recheckMilliseconds`).
  let recheck: Int64

  /// The database as this connection sees it: the file is looked at every time (a removed
  /// board is E500001 at once), its state only when it may have changed.
  func mark(_ pooled: StorePool.Pooled, now: Int64) throws -> StateMark? {
    try pooled.store.checkInPlace()
    let store = pooled.store
    return try pooled.cache.revalidate(
      generation: pooled.generation, now: now, recheck: recheck, look: { try store.stateMark() },
      written: { try store.writtenObjects(after: $0, limit: KeptAnswers.writtenLimit) },
      rules: { store.rules })
  }

  /// A commit of this server: every connection's cache looks again, and the feed's waiters
  /// are woken without waiting for the watcher's next look.
  func noteCommit() {
    pool.noteWrite()
    feed.noteCommit()
  }
}
