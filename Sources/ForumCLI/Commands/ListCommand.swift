import Datastore
import Forum

/// `list`: threads by latest activity, a page at a time.
enum ListCommand: ForumCommand {
  static let name = "list"
  static let aliases = ["ls"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "threads, most recent activity first, 20 a page",
      "スレッドの一覧 (新しい順、1 ページ 20 件)"),
    details: Localized(
      "Shows number, title, the start of the description, author, comment count, age, "
        + "and ▣ when the thread has an image. Your own threads are marked ●. "
        + "`next` and `prev` turn the page. +N counts the posts you have not read (your own "
        + "never count); --unread lists only threads that have some.",
      "番号、タイトル、本文の冒頭、投稿者、コメント数、経過時間を表示します。画像付きは ▣、"
        + "自分のスレッドは ● です。`next` と `prev` でページを移ります。+N は未読の数です "
        + "(自分の投稿は数えません)。--unread で未読のあるスレッドだけを表示します。"),
    parameters: [unread, page])

  static let unread = Flag(
    "unread", help: Localized("only threads with posts you have not read", "未読のあるスレッドだけ"))
  static let page = Option<PageRequest>(
    "page", help: Localized("which page (`last` is the oldest)", "ページ (`last` は最後)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    if invocation[unread] {
      if invocation[Self.page] == .last {
        throw CLIError.usage(session.messages.usage("list --unread [--page N]"))
      }
      try showUnread(page: invocation[Self.page]?.number(last: 1) ?? 1, in: session)
      return .next
    }
    let page: Int
    var total: Int?
    if invocation[Self.page] == .last {
      total = try session.board.threadCount()
      page = Board.lastPage(commentCount: total!)
    } else {
      page = invocation[Self.page]?.number(last: 1) ?? 1
    }
    try show(page: page, total: total, in: session)
    return .next
  }

  /// Prints page `page` of the threads with unread posts.
  static func showUnread(page: Int, in session: Session) throws {
    let threads = try session.board.unreadThreads(page: page)
    if threads.items.isEmpty && page > 1 {
      throw CLIError.notFound(session.messages.pastTheEnd(page, "list --unread"))
    }
    session.navigation.listed(.unread(page: page))
    if session.json {
      session.emitPage(threads.items.map(\.json), page: page, hasMore: threads.hasMore)
      return
    }
    guard !threads.items.isEmpty else {
      print(session.messages.noUnreadThreads)
      return
    }
    var lines = session.renderer.threadList(threads, pages: 1)
    if threads.hasMore {
      lines.append(
        session.style.dim(
          "\(session.messages.page) \(page) — \(session.messages.more): "
            + "list --unread --page \(page + 1)"))
    }
    session.printLines(lines)
  }

  /// Prints page `page` of the list; a page past the end is "not found".
  static func show(page: Int, total known: Int? = nil, in session: Session) throws {
    // Counting costs a walk of the index: only when there is more than one page. Past page 1 it
    // is needed anyway, and lets a page in the back half be read from the oldest end.
    let total = try known ?? (page > 1 ? session.board.threadCount() : nil)
    let listed = try session.board.threads(
      page: page, total: total, countingPages: !session.json)
    // Muted threads are left out of the page, and said to be.
    let (threads, hidden) = Board.hiding(try session.board.marks().muted, from: listed)
    if listed.items.isEmpty && page > 1 {
      throw CLIError.notFound(session.messages.pastTheEnd(page, "list --page last"))
    }
    session.navigation.listed(.threads(page: page))
    if session.json {
      session.emitPage(
        threads.items.map(\.json), page: page, hasMore: threads.hasMore, count: total,
        with: hidden > 0 ? ["muted": .int(Int64(hidden))] : [:])
      return
    }
    let pages =
      page == 1 && !threads.hasMore
      ? 1 : Board.lastPage(commentCount: try listed.total ?? session.board.threadCount())
    var lines = session.renderer.threadList(threads, pages: pages)
    if hidden > 0 { lines.append(session.style.dim(session.messages.mutedHidden(hidden))) }
    session.printLines(lines)
  }
}
