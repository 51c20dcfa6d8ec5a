/// When a connection next tries to start the write-ahead log again (`Connection.restartLog`),
/// and how long that try waits for the log's readers, from how the earlier tries ended.
///
/// A try holds the writers while it waits. A reader that stays in the log (a member's open
/// `sqlite3` transaction) fails every try: after the first two, one a length (`restartPages`)
/// with the shortest wait (the second waits twice as long). Readers that keep moving, but slowly (a machine busier than its cores
/// does not run the thread that would end a pooled read within 50 ms), fail tries too: the log
/// then grew by whole lengths (past three, twice in a row, in the suite's CI). They are told
/// apart by what the failed try copied: a reader that stays holds the copy at the same frame,
/// moving ones let it go further each time. Moving ones get the next try soon (an eighth of a
/// length) with twice the wait, up to `longestWait`.
struct LogRestarts {
  /// Log frames (pages) past which the log is started again: 64 MB of 4 KB pages. A restart
  /// holds writers for a few milliseconds; at 16 MB it came three times a second under POSTs
  /// and doubled their p99 (BENCHMARKS N6).
  static let restartPages: Int32 = 16_384
  /// The wait of a first try, for the writer and for the log's readers, in milliseconds: a
  /// served request's read lasts a few.
  static let shortestWait: Int32 = 50
  /// The longest wait a try gets after tries whose readers kept moving.
  static let longestWait: Int32 = 400

  /// How the try ended.
  enum Outcome: Equatable {
    case restarted
    /// A reader was still in the log when the wait ended; the log's frames copied into the
    /// database by then.
    case readerStayed(copied: Int32)
    /// Another connection's checkpoint held it off at once.
    case checkpointRunning
  }

  /// The log's length at which the next try comes.
  private(set) var nextFrames = restartPages
  /// How long the next try waits, in milliseconds.
  private(set) var wait = shortestWait
  /// Tries so far (tests).
  private(set) var attempts = 0
  /// What the last failed try in a row copied; nil after a restart.
  private var lastCopied: Int32?

  /// True when a log `frames` long is to be started again now.
  func due(_ frames: Int32) -> Bool { frames >= nextFrames }

  /// A log shorter than a length (another connection started it again): nothing failed.
  mutating func noteShort() {
    (nextFrames, wait, lastCopied) = (Self.restartPages, Self.shortestWait, nil)
  }

  /// A try in a log `frames` long ended as `outcome`.
  mutating func note(_ outcome: Outcome, frames: Int32) {
    attempts += 1
    switch outcome {
    case .restarted: noteShort()
    case .readerStayed(let copied):
      if let lastCopied, copied <= lastCopied {
        // The same reader holds the copy where it was: one try a length, a short wait.
        (nextFrames, wait) = (frames + Self.restartPages, Self.shortestWait)
      } else {
        // Readers moved (or a first failure): soon again, waiting longer.
        (nextFrames, wait) = (frames + Self.restartPages / 8, min(wait * 2, Self.longestWait))
      }
      lastCopied = copied
    // A few milliseconds of another's checkpoint: again at the next chance.
    case .checkpointRunning: break
    }
  }
}
