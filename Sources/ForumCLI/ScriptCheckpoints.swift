import Datastore
import Forum
import NCMBServer

#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

/// A script's checkpoints on a thread of their own (`Checkpointer`, as the server's): between
/// two lines the log was copied into the database by the writer itself, whose next line then
/// waited for the copy and its two `fdatasync`s (the longest step between two comments: 0.7 s).
/// Local files only; the prompt copies while it waits, as before.
enum ScriptCheckpoints {
  /// The checkpointer for `board`'s script, set as where its checkpoints go; nil at the prompt,
  /// on a server's board, or when no thread could start.
  static func start(for board: Board, interactive: Bool) -> Checkpointer? {
    guard !interactive, board.groupsScriptLines else { return nil }
    let location = board.location
    let boardId = board.boardId
    let checkpointer = Checkpointer(open: {
      // Never a new empty board where the file was removed (opened without creating: a look
      // first, then an open that creates, made one when the file went in between), nor
      // another put in its place.
      let store = try Datastore.open(location, existing: true)
      guard store.boardId == boardId else {
        throw DatastoreError(.systemError, detail: "\(location) is another board now")
      }
      return store
    })
    guard checkpointer.isRunning else { return nil }
    board.checkpointElsewhere { checkpointer.noteCommit() }
    return checkpointer
  }

  /// Ends the thread, its connection closed, then copies what is left on the script's own:
  /// when the script ends, the database file holds all it committed.
  static func end(_ checkpointer: Checkpointer?, for board: Board) {
    guard let checkpointer else { return }
    checkpointer.stopAndWait()
    board.checkpointElsewhere(nil)
  }
}
