import Datastore
import Forum

/// `delete`: your own thread (with its comments and image) or comment, after asking.
enum DeleteCommand: ForumCommand {
  static let info = CommandInfo(
    name: "delete", aliases: ["rm"], usage: "delete THREAD | THREAD/COMMENT [--yes]",
    summary: Localized(
      "delete your own thread (with its comments and image) or comment",
      "自分のスレッド (コメントと画像ごと) かコメントを削除"),
    details: Localized(
      "Shows what will go and asks first; --yes skips the question (needed in scripts). "
        + "`delete 3` is always thread #3; inside a thread at the prompt `delete /3` is its "
        + "comment 3.",
      "削除するものを示して確認します。--yes で確認を省きます (スクリプトでは必須)。"
        + "`delete 3` は常にスレッド #3 です。プロンプトで現在のスレッドにいるときは "
        + "`delete /3` がそのコメント 3 です。"),
    flags: ["yes", "y"], arguments: 1...1, completion: .threads)

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let messages = session.messages
    let target = try session.postReference(invocation.positionals[0])
    let confirmed = invocation.flags.contains("yes") || invocation.flags.contains("y")
    if !confirmed && !session.input.isInteractive {
      throw CLIError.usage(messages.deleteNeedsYes)
    }
    do {
      switch target {
      case .thread(let number):
        let thread = try session.board.thread(number)
        if !confirmed {
          var what = "#\(number) \"\(SafeText.truncate(SafeText.sanitize(thread.title), to: 40))\""
          what += " · \(messages.commentCount(thread.commentCount))"
          if thread.image != nil { what += " · \(messages.image)" }
          try session.confirm(what)
        }
        try session.board.deleteThread(number)
        if session.currentThread == number { session.currentThread = nil }
      case .comment(let threadNumber, let number):
        let comment = try session.board.comment(number, inThread: threadNumber)
        if !confirmed {
          let text = SafeText.truncate(SafeText.sanitize(comment.text), to: 40)
          try session.confirm("\(threadNumber)/\(number) \"\(text)\"")
        }
        try session.board.deleteComment(number, inThread: threadNumber)
        session.live.deletedHere.insert("\(threadNumber)/\(number)")  // said here, not live
      }
    } catch let error as DatastoreError where error.code == .noAccess {
      throw CLIError.deleteRefused(error)
    }
    if session.json {
      session.emit(.object([:]))
    } else {
      print(messages.deleted(target.label))
    }
    return .next
  }
}
