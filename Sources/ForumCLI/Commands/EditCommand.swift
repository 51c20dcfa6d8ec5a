import Datastore
import Forum

/// `edit 12 --title T --description D`, `edit 12/3 TEXT`: only the author may; the earlier
/// text is kept as a revision (`history`).
enum EditCommand: ForumCommand {
  static let name = "edit"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "change your thread's title or description, or your comment", "自分のスレッドやコメントを編集"),
    details: Localized(
      "Scripts and one-shot commands give the new text: `edit 12/3 TEXT` (the rest of the "
        + "line, exactly as typed), `edit 12 --title T --description D`, or `edit 12` followed "
        + "by a title line and a description up to `.` (empty keeps it). At the prompt without "
        + "it, the old text is filled in for you to change, or opened in $VISUAL/$EDITOR "
        + "(always with --edit, and for text of several lines). Earlier versions stay: "
        + "`history 12/3`.",
      "スクリプトと 1 回限りのコマンドでは新しい本文を指定します: `edit 12/3 本文` (行の残り"
        + "そのまま)、`edit 12 --title T --description D`、または `edit 12` の後にタイトルの行と「.」"
        + "までの本文 (空なら元のまま)。プロンプトで省くと元の本文が入力済み"
        + "で表示されるか、$VISUAL/$EDITOR で開きます (--edit のときと複数行のとき)。"
        + "以前の版は残ります: `history 12/3`。"),
    parameters: [post, TextParameter(kind: .afterReference), title, description, edit],
    collapsesOptions: true)

  static let post = Argument<PostRef>(
    help: Localized(
      "12 (a thread), 12/3 (a comment), /3 in a thread", "12 (スレッド)、12/3 (コメント)、スレッド内では /3"))
  static let title = Option<String>(
    "title", value: "T", help: Localized("a thread's new title", "スレッドの新しいタイトル"))
  static let description = Option<String>(
    "description", value: "D", help: Localized("a thread's new text", "スレッドの新しい本文"))
  static let edit = Flag(
    "edit", help: Localized("write the text in $VISUAL or $EDITOR", "本文を $VISUAL か $EDITOR で書く"))

  /// In a script a comment edited without its text reads it up to `.`; a thread edited without
  /// --title or --description reads a title line and a description up to `.`, as `new` does.
  static func draftParts(_ words: CommandWords) -> [DraftPart] {
    let parsed = try? Invocation(
      words, info: info, insideThread: false, messages: Messages(japanese: false), lenient: true)
    guard let parsed, let reference = parsed.positionals.first, !parsed[GlobalOptions.helpFlag],
      (parsed.text ?? "").isEmpty
    else { return [] }
    if reference.contains("/") { return [.block] }
    return parsed.anyOptionGiven ? [] : [.line, .block]
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let messages = session.messages
    let target = try session.resolve(invocation[post]!)
    let text = invocation.text ?? ""
    switch target {
    case .comment(let threadNumber, let number):
      guard !invocation.anyOptionGiven else {
        throw CLIError.usage(messages.usage("edit THREAD/COMMENT [TEXT]"))
      }
      var newText = text
      if newText.isEmpty {
        let comment = try session.board.comment(number, inThread: threadNumber)
        try checkAuthor(comment.isMine, comment.authorName, target.label, comment.moderatedDate)
        newText = try session.revise(
          comment.text, heading: messages.editPrompt, edit: invocation[edit])
      }
      let edited = try session.board.editComment(number, inThread: threadNumber, text: newText)
      if session.json {
        session.emit(edited.json)
      } else {
        print(messages.editedPost(target.label))
      }
    case .thread(let number):
      guard text.isEmpty else { throw CLIError.usage(messages.editThreadNeedsFields) }
      var title = invocation[Self.title]
      var description = invocation[Self.description]
      if title == nil && description == nil {
        let thread = try session.board.thread(number)
        try checkAuthor(thread.isMine, thread.authorName, target.label, thread.moderatedDate)
        guard session.input.isInteractive else {
          // A script gives the title line and the description up to `.`; empty keeps each.
          let newTitle: String
          let newDescription: String
          do {
            newTitle = try session.ask(messages.titlePrompt)
            newDescription = try session.draft(messages.descriptionPrompt)
          } catch CLIError.cancelled {
            throw CLIError.usage(messages.editThreadNeedsFields)  // nothing given at all
          }
          guard !newTitle.isEmpty || !newDescription.isEmpty else {
            throw CLIError.usage(messages.editThreadNeedsFields)
          }
          let edited = try session.board.editThread(
            number, title: newTitle.isEmpty ? nil : newTitle,
            description: newDescription.isEmpty ? nil : newDescription)
          if session.json {
            session.emit(edited.json)
          } else {
            print(messages.editedPost(target.label))
          }
          return .next
        }
        title = try session.askPrefilled(messages.titlePrompt, thread.title)
        description = try session.revise(
          thread.description, heading: messages.descriptionPrompt,
          edit: invocation[edit])
      }
      let edited = try session.board.editThread(
        number, title: title, description: description)
      if session.json {
        session.emit(edited.json)
      } else {
        print(messages.editedPost(target.label))
      }
    }
    return .next
  }

  /// Before anyone types: someone else's post is refused saying whose, a taken-down one is gone.
  private static func checkAuthor(_ mine: Bool, _ author: String, _ label: String, _ taken: Int64?)
    throws
  {
    if taken != nil {
      throw DatastoreError(.notFound, reason: BoardReason.takenDown(label: label))
    }
    if !mine {
      throw DatastoreError(
        .noAccess,
        reason: BoardReason.onlyAuthorMayEdit(author: SafeText.sanitize(author), label: label))
    }
  }
}

/// `history 12/3`: every kept revision of a post with its time, oldest first, 20 a page.
enum HistoryCommand: ForumCommand {
  static let name = "history"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "the earlier versions of an edited thread or comment", "編集されたスレッドやコメントの以前の版"),
    details: Localized(
      "Oldest first, 20 a page. The first version and the latest 99 are kept; the numbers of "
        + "those dropped between them are skipped.",
      "古い順に 1 ページ 20 件。最初の版と最新の 99 版が残り、その間の版の番号は飛びます。"),
    parameters: [post, page])

  static let post = Argument<PostRef>()
  static let page = Option<PageRequest>(
    "page", help: Localized("which page (without it: the first)", "ページ (なければ最初)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let target = try session.resolve(invocation[post]!)
    let (thread, comment): (Int, Int?)
    switch target {
    case .thread(let number): (thread, comment) = (number, nil)
    case .comment(let number, let inThread): (thread, comment) = (number, inThread)
    }
    let request = invocation[Self.page]
    var number = request?.number(last: 1) ?? 1
    var (page, pages) = try session.board.history(of: thread, comment: comment, page: number)
    if request == .last && pages != number {
      number = pages
      (page, pages) = try session.board.history(of: thread, comment: comment, page: number)
    }
    let command = "history \(target.label.hasPrefix("#") ? String(thread) : target.label)"
    guard !page.items.isEmpty else {
      throw CLIError.notFound(session.messages.pastTheEnd(number, "\(command) --page \(pages)"))
    }
    if session.json {
      session.emitPage(
        page.items.map { revision in
          var fields = revision.fields
          fields["revision"] = .int(Int64(revision.number))
          fields["date"] = Board.dateJSON(revision.date)
          return .object(fields)
        }, page: number, hasMore: page.hasMore)
      return .next
    }
    var lines: [String] = []
    let width = session.terminal.width
    var previous: Int?
    for (index, revision) in page.items.enumerated() {
      // Between the first and the latest kept, the dropped ones are said as a gap.
      if let previous, revision.number > previous + 1 {
        lines.append(
          session.style.dim(session.messages.revisionsNotKept(previous + 1, revision.number - 1)))
      }
      previous = revision.number
      let current = !page.hasMore && index == page.items.count - 1
      lines.append(
        session.style.bold(session.messages.revision(revision.number, current: current))
          + " · " + session.style.dim(LocalTime.string(milliseconds: revision.date)))
      for field in ["title", "description", "text"] {
        guard let value = revision.fields[field]?.stringValue else { continue }
        let text = SafeText.sanitize(value, keepNewlines: true)
        let prefix = field == "text" ? "" : "\(field): "
        lines += SafeText.wrap(prefix + text, to: max(10, width - 4)).map { "    " + $0 }
      }
    }
    if pages > 1 {
      var footer = "\(session.messages.page) \(number)/\(pages)"
      if page.hasMore { footer += " — \(session.messages.more): \(command) --page \(number + 1)" }
      lines.append(session.style.dim(footer))
    }
    session.printLines(lines)
    return .next
  }
}
