import Testing

@testable import Datastore

/// When the next log restart comes and how long it waits, from how the earlier ones ended
/// (`LogRestarts`): no files, no threads, no clock.
@Suite("When a log restart is tried again")
struct LogRestartsPolicyTests {
  let length = LogRestarts.restartPages

  /// A reader behind the log's end (the copy stopped short of it) fails every try, even one
  /// whose view moves now and then (the copy then goes further each time): one try a length,
  /// each with the shortest wait, for the writer as for a checkpointer.
  @Test(arguments: [true, false])
  func aReaderBehindTheEndGetsOneShortTryALength(writer: Bool) {
    var restarts = LogRestarts(triesLonger: writer)
    #expect(!restarts.due(length - 1))
    #expect(restarts.due(length))
    var frames = length
    for _ in 0..<6 {
      restarts.note(.readersStayed(atTheEnd: false), frames: frames)
      #expect(restarts.nextFrames == frames + length)
      #expect(restarts.wait == LogRestarts.shortestWait)
      frames = restarts.nextFrames
    }
    #expect(restarts.attempts == 6)
  }

  /// Readers at the log's end that did not leave in time (a busy machine): the writer tries an
  /// eighth of a length on with twice the wait, three times in a row at most, then a length on
  /// with the shortest wait, and again so. A restart sets it all back.
  @Test func readersAtTheEndGetThreeLongerTriesALength() {
    var restarts = LogRestarts(triesLonger: true)
    var frames = length
    var steps: [(Int32, Int32)] = []
    for _ in 0..<8 {
      restarts.note(.readersStayed(atTheEnd: true), frames: frames)
      steps.append((restarts.nextFrames - frames, restarts.wait))
      frames = restarts.nextFrames
    }
    let eighth = length / 8
    let expected: [(Int32, Int32)] = [
      (eighth, 100), (eighth, 200), (eighth, 400), (length, 50),
      (eighth, 100), (eighth, 200), (eighth, 400), (length, 50),
    ]
    #expect(steps.map(\.0) == expected.map(\.0))
    #expect(steps.map(\.1) == expected.map(\.1))
    // At most 750 ms of waiting in a length and three eighths of log.
    restarts.note(.restarted, frames: frames)
    #expect(restarts.nextFrames == length)
    #expect(restarts.wait == LogRestarts.shortestWait)
    restarts.note(.readersStayed(atTheEnd: true), frames: length)
    #expect(restarts.nextFrames == length + eighth)
  }

  /// A checkpointer's try fails at the log's end when the writer holds the write lock (SQLite
  /// then copies what it can and says busy): it never waits longer for it.
  @Test func aCheckpointersTriesNeverWaitLonger() {
    var restarts = LogRestarts(triesLonger: false)
    restarts.note(.readersStayed(atTheEnd: true), frames: length)
    #expect(restarts.nextFrames == 2 * length)
    #expect(restarts.wait == LogRestarts.shortestWait)
  }

  /// Another connection's checkpoint held the try off at once: the next chance tries again,
  /// the wait unchanged; a log another connection restarted sets everything back.
  @Test func aRunningCheckpointOrAShortLogChangesNothingOwed() {
    var restarts = LogRestarts(triesLonger: true)
    restarts.note(.readersStayed(atTheEnd: true), frames: length)
    restarts.note(.checkpointRunning, frames: length + length / 8)
    #expect(restarts.due(length + length / 8))
    #expect(restarts.wait == 2 * LogRestarts.shortestWait)
    restarts.noteShort()
    #expect(!restarts.due(length - 1))
    #expect(restarts.wait == LogRestarts.shortestWait)
  }
}
