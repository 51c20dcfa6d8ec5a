/// When a connection next tries to start the write-ahead log again (`Connection.restartLog`),
/// and how long that try waits for the log's readers, from how the earlier tries ended.
///
/// A try holds the writers while it waits. A reader behind the log's end (a member's open
/// `sqlite3` transaction, a backup that begins again now and then) fails every try: one try a
/// length (`restartPages`) with the shortest wait, as the copy stops at its view. Readers at the
/// log's end (the copy reached it, and only they were left: a server's pooled reads on a machine
/// busier than its cores, whose thread is not run within 50 ms) leave if given a little longer:
/// the writer's next try comes an eighth of a length later with twice the wait, three times at
/// most in a row (100, 200, 400 ms), then a length later with the shortest again. With a length
/// between tries, two such failures in a row let the log pass three lengths (the suite's CI).
struct LogRestarts {
  /// Log frames (pages) past which the log is started again: 64 MB of 4 KB pages. A restart
  /// holds writers for a few milliseconds; at 16 MB it came three times a second under POSTs
  /// and doubled their p99 (BENCHMARKS N6).
  static let restartPages: Int32 = 16_384
  /// The wait of a first try, for the writer and for the log's readers, in milliseconds: a
  /// served request's read lasts a few.
  static let shortestWait: Int32 = 50
  /// Tries in a row with a longer wait, each twice the last's.
  static let longerTries = 3

  /// How the try ended.
  enum Outcome: Equatable {
    case restarted
    /// Readers were still in the log when the wait ended: `atTheEnd` when the whole log was
    /// copied by then (only readers of its newest frames were left).
    case readersStayed(atTheEnd: Bool)
    /// Another connection's checkpoint held it off at once.
    case checkpointRunning
  }

  /// Whether a failed try at the log's end is followed by sooner, longer ones: the writer's own
  /// (`Connection.restartLongLog`). Another connection's try (a checkpointer's) fails the same
  /// way when the writer holds the write lock, and would wait the longer waits for it.
  let triesLonger: Bool

  /// The log's length at which the next try comes.
  private(set) var nextFrames = restartPages
  /// How long the next try waits, in milliseconds.
  private(set) var wait = shortestWait
  /// Tries so far (tests).
  private(set) var attempts = 0
  /// Longer tries in a row so far.
  private var longer = 0

  init(triesLonger: Bool) { self.triesLonger = triesLonger }

  /// True when a log `frames` long is to be started again now.
  func due(_ frames: Int32) -> Bool { frames >= nextFrames }

  /// A log shorter than a length (this or another connection started it again): nothing owed.
  mutating func noteShort() {
    (nextFrames, wait, longer) = (Self.restartPages, Self.shortestWait, 0)
  }

  /// A try in a log `frames` long ended as `outcome`.
  mutating func note(_ outcome: Outcome, frames: Int32) {
    attempts += 1
    switch outcome {
    case .restarted: noteShort()
    case .readersStayed(let atTheEnd):
      if atTheEnd && triesLonger && longer < Self.longerTries {
        longer += 1
        (nextFrames, wait) = (frames + Self.restartPages / 8, Self.shortestWait << longer)
      } else {
        (nextFrames, wait, longer) = (frames + Self.restartPages, Self.shortestWait, 0)
      }
    // A few milliseconds of another's checkpoint: again at the next chance.
    case .checkpointRunning: break
    }
  }
}
