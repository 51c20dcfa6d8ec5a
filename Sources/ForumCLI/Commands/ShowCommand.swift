import Forum

/// `show`: a thread with its image and comments; at the prompt it becomes the current thread.
enum ShowCommand: ForumCommand {
  static let name = "show"
  static let aliases = ["open"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "a thread with its image and comments, 20 a page",
      "スレッドを画像とコメント付きで表示 (1 ページ 20 件)"),
    details: Localized(
      "THREAD is a number like 12 or #12. At the prompt it becomes the current thread: "
        + "`comment TEXT` posts to it, `/3` is its comment 3, new comments in it appear as "
        + "they arrive, and `leave` ends it. Scripts have no current thread. Without --page it "
        + "opens on the page of your first unread comment, and what it shows counts as read. "
        + "`show 12/14` opens the page holding comment 14 of thread 12 and marks it with ▶ "
        + "(inside a thread, `show /14`).",
      "THREAD は 12 や #12 のような番号です。プロンプトでは現在のスレッドになり、"
        + "`comment 本文` はそこへ投稿し、`/3` はそのコメント 3 を指し、新しいコメントが届くと"
        + "表示されます。`leave` で離れます。スクリプトに現在のスレッドはありません。"
        + "--page がなければ最初の未読コメントのページを開き、表示したものを既読にします。"
        + "`show 12/14` はスレッド 12 のコメント 14 を含むページを開き、▶ で示します"
        + " (スレッド内では `show /14`)。"),
    parameters: [thread, page])

  static let thread = Argument<PostRef>(
    help: Localized(
      "12 or #12; 12/14 for the page holding comment 14, marked; at the prompt the current "
        + "thread when left out",
      "12 か #12。12/14 はコメント 14 を含むページ (印付き)。プロンプトでは省くと現在のスレッド"),
    optional: true)
  static let page = Option<PageRequest>(
    "page",
    help: Localized(
      "which page (without it: your first unread)", "ページ (なければ最初の未読のページ)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let number: Int
    switch invocation[thread] {
    case .thread(let given)?: number = given
    case let reference?:
      guard invocation[page] == nil else {
        throw CLIError.usage(session.messages.usage(info.usage))
      }
      try showComment(try session.resolve(reference), in: session)
      return .next
    case nil: number = try session.thread(nil, example: "show 12")
    }
    // The text shows no unread count; `--json` gives the thread's, so it counts them.
    let thread =
      session.json ? try session.board.thread(number) : try session.board.threadToRead(number)
    let total = try session.board.commentTotal(of: thread)
    let last = Board.lastPage(commentCount: total)
    // Without --page, the thread opens where your unread posts start.
    let page =
      try invocation[Self.page].map { $0.number(last: last) }
      ?? session.board.firstUnreadPage(of: thread)
    try show(
      thread, page: page, total: total, lastAsked: invocation[Self.page] == .last, in: session)
    return .next
  }

  /// Prints page `page` of `thread`'s comments (its head on the first page). `total` is
  /// `Board.commentTotal(of:)` when known; `lastAsked`, that `page` is the last one's number.
  static func show(
    _ thread: ForumThread, page asked: Int, marking marked: ForumComment? = nil,
    total known: Int? = nil, lastAsked: Bool = false, in session: Session
  ) throws {
    var page = asked
    var total = try known ?? session.board.commentTotal(of: thread)
    var last = Board.lastPage(commentCount: total)
    func pastTheEnd() -> CLIError {
      CLIError.notFound(
        session.messages.pastTheEnd(page, "show \(thread.number) --page \(last)"))
    }
    if page > last { throw pastTheEnd() }
    var comments = try session.board.comments(of: thread, page: page)
    // Nothing on a page the kept count promised: both counters were written by hand (issue
    // 22). What the reader can see decides.
    if comments.items.isEmpty && page > 1 {
      total = try session.board.countComments(of: thread)
      last = Board.lastPage(commentCount: total)
      guard lastAsked else { throw pastTheEnd() }
      page = last
      comments = try session.board.comments(of: thread, page: page)
    }
    // A page with nothing after it is the last: the count and the footer say what is there,
    // whatever the thread's counters say.
    if !comments.hasMore && !comments.items.isEmpty {
      total = (page - 1) * Board.pageSize + comments.items.count
    }
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
      var fields = ["thread": thread.json]
      if let marked { fields["comment"] = marked.json }
      session.emitPage(
        comments.items.map(\.json), page: page, hasMore: comments.hasMore,
        count: total, with: fields)
      return
    }
    let image = page == 1 ? session.imageBlock(for: thread, large: false) : []
    var renderer = session.renderer
    // Two people of one name on the page (the thread's author among them) are told apart.
    renderer.sharedNames = BoardRenderer.sharedNames(
      [(thread.authorName, thread.authorId)] + comments.items.map { ($0.authorName, $0.authorId) })
    session.printLines(renderer.threadHeader(thread, image: image))
    renderer.commentsMayArrive = session.atPrompt
    renderer.markedComment = marked?.number
    session.printLines(
      renderer.comments(comments, of: thread, lastPage: Board.lastPage(commentCount: total)))
  }
}

/// `next` and `prev`: the following or preceding page of the last listing or thread shown.
enum NextCommand: ForumCommand {
  static let name = "next"
  static let aliases = ["n"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
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
  static let name = "prev"
  static let aliases = ["previous", "p"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "the previous page of the last list or thread shown", "直前の一覧かスレッドの前のページ"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try NextCommand.turnPage(by: -1, in: session)
    return .next
  }
}
