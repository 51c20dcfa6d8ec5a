import Datastore

/// A moderator's flag on a public thread, declared once: the engine's rule it makes
/// (`FlagRule`, in `Board.rules`), the refusals `Board.setFlag` says, and what a comment it
/// refuses says. The commands and marks that show it are ForumCLI's (`FlagCommand`).
public struct ThreadFlag: Sendable {
  /// The thread's field holding when it was set; absent while it is not.
  public let field: String
  /// While it is set the engine refuses every new comment and reply, whoever writes it and by
  /// whatever path (`FlagRule.locksChildren`), and says `refusedComment`.
  let refusedComment: (@Sendable (Int) -> BoardReason)?
  /// Said to anyone but moderators and the board's owner who sets or clears it.
  let onlyModerators: BoardReason
  /// Said for a private thread: only public threads carry flags (everyone sees them).
  let privateThread: @Sendable (Int) -> BoardReason

  var rule: FlagRule {
    FlagRule(
      className: Board.threadClass, field: field, role: Board.moderatorRole,
      locksChildren: refusedComment != nil)
  }

  /// A pinned thread is listed first (`threads(page:)`, `Board.indexes`).
  public static let pin = ThreadFlag(
    field: Board.pinField, refusedComment: nil, onlyModerators: .onlyModeratorsPin,
    privateThread: { .privateThreadNotPinned($0) })

  /// A locked thread takes no new comments or replies.
  public static let lock = ThreadFlag(
    field: "lockedDate", refusedComment: { .threadLocked($0) },
    onlyModerators: .onlyModeratorsLock, privateThread: { .privateThreadNotLocked($0) })

  /// Every flag, in the order `Board.rules` records them.
  public static let all = [pin, lock]

  /// What a comment on thread `number` that the engine refused for its thread's flag says
  /// (`StoreReason.parentLocked`); nil for any other refusal. The engine's reason names the
  /// thread, not the flag: a second flag that closes threads would need it to.
  static func refusal(of error: DatastoreError, commentOn number: Int) -> DatastoreError? {
    guard error.code == .noAccess,
      // A comment's pointer to its thread (the comments' `ChildRule`) names what is closed.
      error.reason == .store(.parentLocked(field: "thread")),
      let said = all.lazy.compactMap(\.refusedComment).first
    else { return nil }
    return DatastoreError(.noAccess, reason: said(number))
  }
}
