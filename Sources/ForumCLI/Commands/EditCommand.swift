import Datastore
import Forum

/// `edit 12 --title T --description D`, `edit 12/3 TEXT`: only the author may; the earlier
/// text is kept as a revision (`history`).
enum EditCommand: ForumCommand {
  static let info = CommandInfo(
    name: "edit",
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
    do {
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
    } catch let error as DatastoreError where error.code == .noAccess {
      let author: String?
      switch target {
      case .thread(let number): author = try? session.board.thread(number).authorName
      case .comment(let thread, let number):
        author = try? session.board.comment(number, inThread: thread).authorName
      }
      guard let author else { throw error }
      throw CLIError.refused(
        messages.editRefused(author: SafeText.sanitize(author), target.label),
        DatastoreError(.noAccess))
    }
    return .next
  }

  /// Before anyone types: someone else's post is refused saying whose, a taken-down one is gone.
  private static func checkAuthor(_ mine: Bool, _ author: String, _ label: String, _ taken: Int64?)
    throws
  {
    if taken != nil {
      throw DatastoreError(.notFound, detail: "\(label) was deleted by a moderator")
    }
    if !mine {
      throw DatastoreError(
        .noAccess, detail: "only \(SafeText.sanitize(author)) (the author) may edit \(label)")
    }
  }
}

/// `history 12/3`: every revision of a post with its time, oldest first.
enum HistoryCommand: ForumCommand {
  static let info = CommandInfo(
    name: "history",
    summary: Localized(
      "the earlier versions of an edited thread or comment", "編集されたスレッドやコメントの以前の版"),
    parameters: [post])

  static let post = Argument<PostRef>()

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let target = try session.resolve(invocation[post]!)
    let revisions: [Revision]
    switch target {
    case .thread(let number): revisions = try session.board.history(of: number, comment: nil)
    case .comment(let thread, let number):
      revisions = try session.board.history(of: thread, comment: number)
    }
    if session.json {
      session.emit(
        .object([
          "results": .array(
            revisions.map { revision in
              var fields = revision.fields
              fields["revision"] = .int(Int64(revision.number))
              fields["date"] = Board.dateJSON(revision.date)
              return .object(fields)
            })
        ]))
      return .next
    }
    var lines: [String] = []
    let width = session.terminal.width
    for revision in revisions {
      let current = revision.number == revisions.count
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
    session.printLines(lines)
    return .next
  }
}
