import Foundation
import Testing

@testable import Datastore

/// A second connection to a board in use (a script's checkpoints, `ScriptCheckpoints`) opens
/// the file only if it is there: a removed board is an error, never a new empty one. Looked for
/// first and then opened by an open that creates, a board removed in between was made again
/// (`ScriptCheckpointTests.aRemovedBoardIsNotMadeAgainByTheCheckpoints`, under a full run).
@Suite("Opening an existing board")
struct ExistingBoardTests {
  @Test func aBoardThatIsGoneIsNotMade() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      do {
        _ = try Datastore.open(path, existing: true)
        Issue.record("a board that is not there was opened")
      } catch let error as DatastoreError {
        #expect(error.code == .systemError, "\(error)")
      }
      let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
      #expect(left.isEmpty, "made: \(left)")
    }
  }

  @Test func aBoardThatIsThereOpens() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("board.sqlite")
      let first = try Datastore.open(path)
      let second = try Datastore.open(path, existing: true)
      #expect(first.boardId == second.boardId)
    }
  }
}
