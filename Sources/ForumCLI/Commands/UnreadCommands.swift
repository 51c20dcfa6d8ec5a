import Datastore
import Forum

/// `unread`: opens the most recently active thread with posts you have not read, on the page of
/// the first of them (`next` keeps its meaning: the next page).
enum UnreadCommand: ForumCommand {
  static let name = "unread"
  static let aliases = ["u"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "open the next thread with posts you have not read", "未読のある次のスレッドを開く"),
    details: Localized(
      "Opens the most recently active thread with unread posts on the page of the first one, "
        + "and marks what it shows as read. Your own posts never count. `list --unread` lists "
        + "them all. `unread --count` prints how many posts and messages are new since you last "
        + "left the prompt and still unread (with `--json`: threads, comments, messages), for a "
        + "shell prompt or a status bar; the prompt starts with the same count in words.",
      "未読のある最新のスレッドを最初の未読のページで開き、表示したものを既読にします。"
        + "自分の投稿は数えません。一覧は `list --unread` です。`unread --count` は前回プロンプトを"
        + "出てから新しく、まだ読んでいない投稿とメッセージの数を表示します (`--json` ではスレッド、"
        + "コメント、メッセージ別)。シェルのプロンプトやステータスバー向けです。プロンプトも起動時に"
        + "同じ数を表示します。"),
    parameters: [count])

  static let count = Flag(
    "count",
    help: Localized(
      "only how many are new and unread, for a shell prompt", "新しい未読の数だけ (シェルのプロンプト向け)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    if invocation[count] {
      try UnreadSummary.printCount(in: session)
      return .next
    }
    guard let thread = try session.board.nextUnreadThread() else {
      if session.json {
        session.emit(.object(["results": .array([])]))
      } else {
        print(session.messages.nothingUnread)
      }
      return .next
    }
    try ShowCommand.show(
      thread, page: try session.board.firstUnreadPage(of: thread), in: session)
    return .next
  }
}

/// `read --all` / `read THREAD`: marks posts read without showing them.
enum ReadCommand: ForumCommand {
  static let name = "read"
  static let info = CommandInfo(
    name: name,
    summary: Localized("mark every thread, or one, as read", "すべて、または 1 つのスレッドを既読にする"),
    parameters: [thread, every])

  static let thread = Argument<ThreadNumber>(
    help: Localized("the thread to mark read", "既読にするスレッド"), optional: true)
  static let every = Flag("all", help: Localized("every thread", "すべてのスレッド"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let all = invocation[every]
    guard all != (invocation[thread] != nil) else {
      throw CLIError.usage(session.messages.readNeedsWhat)
    }
    let label: String
    if all {
      try session.board.markAllRead()
      label = ""
    } else {
      let thread = try session.board.thread(invocation[Self.thread]!.number)
      try session.board.markRead(thread, upTo: thread.lastCommentNumber)
      label = "#\(thread.number)"
    }
    if session.json {
      session.emit(.object([:]))
    } else {
      print(all ? session.messages.allMarkedRead : session.messages.markedRead(label))
    }
    return .next
  }
}
