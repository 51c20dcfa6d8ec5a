import Datastore
import Forum

/// `delete`: your own thread (with its comments and image) or comment, after asking.
enum DeleteCommand: ForumCommand {
  static let name = "delete"
  static let aliases = ["rm"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "delete your own thread (with its comments and image) or comment",
      "自分のスレッド (コメントと画像ごと) かコメントを削除"),
    details: Localized(
      "Shows what will go and asks first; --yes skips the question (needed in scripts). "
        + "`delete 3` is always thread #3; inside a thread at the prompt `delete /3` is its "
        + "comment 3. A moderator's delete of someone else's public post leaves a tombstone "
        + "(\"deleted by a moderator\", with the time); its content is gone.",
      "削除するものを示して確認します。--yes で確認を省きます (スクリプトでは必須)。"
        + "`delete 3` は常にスレッド #3 です。プロンプトで現在のスレッドにいるときは "
        + "`delete /3` がそのコメント 3 です。モデレーターが他人の公開投稿を削除すると、"
        + "内容は消え「モデレーターが削除」と日時の墓標が残ります。"),
    parameters: [post, yes])

  static let post = Argument<PostRef>("THREAD | THREAD/COMMENT")
  static let yes = Flag(
    "yes", aliases: ["y"], help: Localized("do not ask first", "確認しない"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let messages = session.messages
    let target = try session.resolve(invocation[post]!)
    let confirmed = invocation[yes]
    if !confirmed && !session.input.isInteractive {
      throw CLIError.usage(messages.deleteNeedsYes)
    }
    var deletion = Deletion.deleted
    switch target {
    case .thread(let number):
      let thread = try session.board.thread(number)
      if !confirmed {
        var what = "#\(number) \"\(SafeText.truncate(SafeText.sanitize(thread.title), to: 40))\""
        what += " · \(messages.commentCount(thread.commentCount))"
        if thread.image != nil { what += " · \(messages.image)" }
        try session.confirm(what)
      }
      deletion = try session.board.deleteThread(number)
      if session.currentThread == number && deletion == .deleted {
        session.navigation.leave()
      }
    case .comment(let threadNumber, let number):
      let comment = try session.board.comment(number, inThread: threadNumber)
      if !confirmed {
        let text = SafeText.truncate(SafeText.sanitize(comment.text), to: 40)
        try session.confirm("\(threadNumber)/\(number) \"\(text)\"")
      }
      deletion = try session.board.deleteComment(number, inThread: threadNumber)
      session.live.deletedHere.insert("\(threadNumber)/\(number)")  // said here, not live
    }
    if session.json {
      session.emit(.object([:]))
    } else {
      print(
        deletion == .takenDown ? messages.takenDown(target.label) : messages.deleted(target.label))
    }
    return .next
  }
}
