import Forum

/// `show 12/14` (and `show /14` inside a thread): the page of thread 12 that holds comment 14,
/// with that comment marked, so a notice's reference leads straight to what it names.
extension ShowCommand {
  static func showComment(_ reference: PostReference, in session: Session) throws {
    guard case .comment(let threadNumber, let number) = reference else {
      throw CLIError.usage(session.messages.usage(info.usage))
    }
    // The comment must be there to be shown (deleted or unreadable: not found, as everywhere).
    let comment = try session.board.comment(number, inThread: threadNumber)
    let thread =
      session.json
      ? try session.board.thread(threadNumber) : try session.board.threadToRead(threadNumber)
    let page = try session.board.page(ofComment: comment.number, in: thread)
    try show(thread, page: page, marking: comment, in: session)
  }
}
