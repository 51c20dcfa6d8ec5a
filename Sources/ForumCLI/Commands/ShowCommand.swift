import Forum

/// `show`: a thread with its image and comments; at the prompt it becomes the current thread.
enum ShowCommand: ForumCommand {
  static let info = CommandInfo(
    name: "show", aliases: ["open"],
    summary: Localized(
      "a thread with its image and comments, 20 a page",
      "スレッドを画像とコメント付きで表示 (1 ページ 20 件)"),
    details: Localized(
      "THREAD is a number like 12 or #12. At the prompt it becomes the current thread: "
        + "`comment TEXT` posts to it, `/3` is its comment 3, new comments in it appear as "
        + "they arrive, and `leave` ends it. Scripts have no current thread. Without --page it "
        + "opens on the page of your first unread comment, and what it shows counts as read.",
      "THREAD は 12 や #12 のような番号です。プロンプトでは現在のスレッドになり、"
        + "`comment 本文` はそこへ投稿し、`/3` はそのコメント 3 を指し、新しいコメントが届くと"
        + "表示されます。`leave` で離れます。スクリプトに現在のスレッドはありません。"
        + "--page がなければ最初の未読コメントのページを開き、表示したものを既読にします。"),
    parameters: [thread, page])

  static let thread = Argument<ThreadNumber>(
    help: Localized(
      "12 or #12; at the prompt the current thread when left out",
      "12 か #12。プロンプトでは省くと現在のスレッド"), optional: true)
  static let page = Option<PageRequest>(
    "page",
    help: Localized(
      "which page (without it: your first unread)", "ページ (なければ最初の未読のページ)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let number = try session.thread(invocation[thread], example: "show 12")
    // The text shows no unread count; `--json` gives the thread's, so it counts them.
    let thread =
      session.json ? try session.board.thread(number) : try session.board.threadToRead(number)
    let last = try session.board.lastPage(of: thread)
    // Without --page, the thread opens where your unread posts start.
    let page =
      try invocation[Self.page].map { $0.number(last: last) }
      ?? session.board.firstUnreadPage(of: thread)
    try show(thread, page: page, in: session)
    return .next
  }

  /// Prints page `page` of `thread`'s comments (its head on the first page).
  static func show(_ thread: ForumThread, page: Int, in session: Session) throws {
    let last = try session.board.lastPage(of: thread)
    if page > last {
      throw CLIError.notFound(
        session.messages.pastTheEnd(page, "show \(thread.number) --page \(last)"))
    }
    let comments = try session.board.comments(of: thread, page: page)
    // What is shown is read: up to the page's last comment (on the last page, everything).
    let shownUpTo =
      comments.hasMore ? (comments.items.last?.number ?? 0) : thread.lastCommentNumber
    try session.board.markRead(thread, upTo: shownUpTo)
    // The newest comment on screen may be newer than the thread row read before the page.
    session.navigation.opened(
      thread, page: page,
      newest: max(thread.lastCommentNumber, comments.items.last?.number ?? 0),
      shownUpTo: shownUpTo)
    if session.json {
      session.emitPage(
        comments.items.map(\.json), page: page, hasMore: comments.hasMore,
        count: thread.commentCount, with: ["thread": thread.json])
      return
    }
    let image = page == 1 ? session.imageBlock(for: thread, large: false) : []
    var renderer = session.renderer
    // Two people of one name on the page (the thread's author among them) are told apart.
    renderer.sharedNames = BoardRenderer.sharedNames(
      [(thread.authorName, thread.authorId)] + comments.items.map { ($0.authorName, $0.authorId) })
    session.printLines(renderer.threadHeader(thread, image: image))
    renderer.commentsMayArrive = session.atPrompt
    session.printLines(renderer.comments(comments, of: thread))
  }
}

/// `next` and `prev`: the following or preceding page of the last listing or thread shown.
enum NextCommand: ForumCommand {
  static let info = CommandInfo(
    name: "next", aliases: ["n"],
    summary: Localized(
      "the next page of the last list or thread shown", "直前の一覧かスレッドの次のページ"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try turnPage(by: 1, in: session)
    return .next
  }

  static func turnPage(by step: Int, in session: Session) throws {
    switch session.navigation.lastListing {
    case nil:
      throw CLIError.usage(session.messages.nothingToContinue)
    case .threads(let page):
      guard page + step >= 1 else { throw CLIError.notFound(session.messages.firstPage) }
      try ListCommand.show(page: page + step, in: session)
    case .unread(let page):
      guard page + step >= 1 else { throw CLIError.notFound(session.messages.firstPage) }
      try ListCommand.showUnread(page: page + step, in: session)
    case .thread(let number, let page):
      guard page + step >= 1 else { throw CLIError.notFound(session.messages.firstPage) }
      try ShowCommand.show(session.board.thread(number), page: page + step, in: session)
    case .search(let query, let page):
      guard page + step >= 1 else { throw CLIError.notFound(session.messages.firstPage) }
      try SearchCommand.show(query, page: page + step, in: session)
    }
  }
}

enum PreviousCommand: ForumCommand {
  static let info = CommandInfo(
    name: "prev", aliases: ["previous", "p"],
    summary: Localized(
      "the previous page of the last list or thread shown", "直前の一覧かスレッドの前のページ"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try NextCommand.turnPage(by: -1, in: session)
    return .next
  }
}
