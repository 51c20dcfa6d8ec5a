import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The prompt's live view of the board: reads the change feed when the engine says someone
/// wrote (SQLite: `PRAGMA data_version` every 50 ms; PostgreSQL: a notification on the socket
/// the prompt polls with stdin) and after every command, and hands the changes of each class to
/// that class's handler, which returns the lines to print above the prompt.
///
/// Handlers are per class and replaceable: the board's own follow `Thread` and `Comment`; a room
/// (`ChatRoom`) puts its own in place of the `Comment` one while it is open; other features add
/// their classes (`live.setHandler(for: "Message") { changes, session in … }`). A handler returns
/// text already made safe (`SafeText`).
final class LiveFeed {
  typealias Handler = (_ changes: [Change], _ session: Session) throws -> [String]

  private let board: Board
  /// The last change read; nil until the first check, which starts the feed at "now".
  private(set) var cursor: Int64?
  private var handlers: [String: Handler] = [:]
  /// Classes in the order their lines are printed (a deleted thread is said before its comments).
  private var order: [String] = []
  /// Set when the feed cannot go on (the database was removed, the server went away): said
  /// once, then no more checks.
  private(set) var stopped = false
  /// The last failure said, so that one that repeats is said once.
  private var lastFailure: String?
  private var descriptorChecked = false
  private var wakeDescriptor: Int32?

  /// Comments this session deleted itself ("Deleted 1/3." was said), as `thread/number`.
  var deletedHere: Set<String> = []
  /// The person's muted and followed threads (`Session+Follow`), read again when they change.
  var marks: Board.Marks?
  /// Comments of the last batch told as replies or mentions, so a follow notice skips them.
  var addressedNow: Set<String> = []

  init(board: Board) {
    self.board = board
  }

  /// Sets the handler of `className` and returns the one it replaces, for `restore`.
  @discardableResult
  func setHandler(for className: String, _ handler: Handler?) -> Handler? {
    let old = handlers[className]
    handlers[className] = handler
    if handler != nil, !order.contains(className) { order.append(className) }
    return old
  }

  func hasHandler(for className: String) -> Bool { handlers[className] != nil }

  /// A descriptor to poll with stdin, or nil (then `interval` decides when to check).
  var descriptor: Int32? {
    guard !stopped else { return nil }
    if !descriptorChecked {
      descriptorChecked = true
      wakeDescriptor = try? board.wakeFileDescriptor()
    }
    return wakeDescriptor
  }

  /// Seconds between two cheap wake-up checks.
  var interval: Double { board.wakePollInterval }

  /// The lines to print for what happened since the last check. Without `force` the feed is
  /// read only when the engine says someone wrote. Never throws: a failure is one line, said
  /// once.
  func check(_ session: Session, force: Bool) -> [String] {
    guard !stopped else { return [] }
    do {
      guard let start = cursor else {
        _ = try board.hasPendingWakeup()
        cursor = try board.latestChange()
        return []
      }
      let woken = try board.hasPendingWakeup()
      guard force || woken else { return [] }
      // Back after a passing failure (a server away): said once, before what came meanwhile.
      let resumed = lastFailure != nil ? [session.style.dim(session.messages.liveResumed)] : []
      var changes: [Change] = []
      var next = start
      // Until the engine says nothing more came in while we read (a few rounds at most).
      for _ in 0..<20 {
        let batch = try board.changes(since: next)
        if batch.missed {
          // Away longer than the feed keeps (`Change.window`): one line says so, the view
          // starts again from now (tens of thousands of notices would tell nothing), and the
          // current thread is read again when next needed.
          cursor = try board.latestChange()
          lastFailure = nil
          session.navigation.missedChanges()
          return resumed + [session.style.dim(session.messages.liveMissed)]
        }
        changes += batch.changes
        next = batch.next
        if batch.hasMore { continue }
        if try !board.hasPendingWakeup() { break }
      }
      cursor = next
      lastFailure = nil
      return try resumed + lines(for: changes, session)
    } catch {
      return failure(error, session)
    }
  }

  private func lines(for changes: [Change], _ session: Session) throws -> [String] {
    guard !changes.isEmpty else { return [] }
    var lines: [String] = []
    for className in order {
      guard let handler = handlers[className] else { continue }
      let ofClass = changes.filter { $0.className == className }
      if !ofClass.isEmpty { lines += try handler(ofClass, session) }
    }
    return lines
  }

  private func failure(_ error: Error, _ session: Session) -> [String] {
    let datastoreError = error as? DatastoreError
    let detail = datastoreError.map { session.messages.failure($0) } ?? "\(error)"
    // The engine cannot go on: say so once and stop asking (no busy loop on a dead socket).
    // A server that is away may come back (an https board): the feed carries on from where
    // it stopped when it does.
    if datastoreError?.code == .systemError, !LiveFeed.passes(datastoreError) { stopped = true }
    // A server away is said once, whatever the network answers each time it is asked again
    // (a TLS error while it stops, then a refused connection).
    let failure = LiveFeed.passes(datastoreError) ? "away" : detail
    guard failure != lastFailure else { return [] }
    lastFailure = failure
    let text = session.messages.liveFailed(SafeText.sanitize(detail), stopped: stopped)
    return [session.style.error("forum: " + text)]
  }

  /// A failure of the network under the board, which may pass.
  static func passes(_ error: DatastoreError?) -> Bool {
    guard case .access(let reason)? = error?.reason else { return false }
    switch reason {
    case .remoteUnreachable, .remoteTimedOut: return true
    default: return false
    }
  }
}
