import Testing

@testable import Datastore

/// When the next log restart comes and how long it waits, from how the earlier ones ended
/// (`LogRestarts`): no files, no threads, no clock.
@Suite("When a log restart is tried again")
struct LogRestartsPolicyTests {
  let length = LogRestarts.restartPages

  /// A reader that stays holds the copy at one frame: after the first failure and a second
  /// try soon after, one try a length, each with the shortest wait.
  @Test func aReaderThatStaysGetsOneShortTryALength() {
    var restarts = LogRestarts()
    #expect(!restarts.due(length - 1))
    #expect(restarts.due(length))
    restarts.note(.readerStayed(copied: 900), frames: length)
    #expect(restarts.nextFrames == length + length / 8)
    #expect(restarts.wait == 2 * LogRestarts.shortestWait)
    var frames = restarts.nextFrames
    for _ in 0..<5 {
      restarts.note(.readerStayed(copied: 900), frames: frames)
      #expect(restarts.nextFrames == frames + length)
      #expect(restarts.wait == LogRestarts.shortestWait)
      frames = restarts.nextFrames
    }
    #expect(restarts.attempts == 6)
  }

  /// Readers that move but slowly (each failed try copied further): the next try an eighth of
  /// a length on, each waiting twice as long up to the longest wait; a restart sets it all back.
  @Test func readersThatKeepMovingAreTriedSoonWithLongerWaits() {
    var restarts = LogRestarts()
    var frames = length
    var waits: [Int32] = []
    for step in 0..<6 {
      restarts.note(.readerStayed(copied: frames - 10), frames: frames)
      #expect(restarts.nextFrames == frames + length / 8, "step \(step)")
      waits.append(restarts.wait)
      frames = restarts.nextFrames
    }
    #expect(waits == [100, 200, 400, 400, 400, 400])
    // Six failures in a row left the log under two lengths long.
    #expect(frames < 2 * length)
    restarts.note(.restarted, frames: frames)
    #expect(restarts.nextFrames == length)
    #expect(restarts.wait == LogRestarts.shortestWait)
    // After a restart a reader's first failure is a first one again: soon after.
    restarts.note(.readerStayed(copied: 5), frames: length)
    #expect(restarts.nextFrames == length + length / 8)
  }

  /// Another connection's checkpoint held the try off at once: the next chance tries again,
  /// the wait unchanged; a log another connection restarted sets everything back.
  @Test func aRunningCheckpointOrAShortLogChangesNothingOwed() {
    var restarts = LogRestarts()
    restarts.note(.readerStayed(copied: 1), frames: length)
    restarts.note(.checkpointRunning, frames: length + length / 8)
    #expect(restarts.due(length + length / 8))
    #expect(restarts.wait == 2 * LogRestarts.shortestWait)
    restarts.noteShort()
    #expect(!restarts.due(length - 1))
    #expect(restarts.wait == LogRestarts.shortestWait)
  }
}
