import Forum

/// `comment`: prose for a thread, from the rest of the line or from lines up to a `.`.
enum CommentCommand: ForumCommand {
  static let name = "comment"
  static let aliases = ["c"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "comment on a thread (the current one at the prompt)", "スレッドにコメント (プロンプトでは現在のスレッド)"),
    details: Localized(
      "The rest of the line is the text, exactly as typed. Inside a thread at the prompt "
        + "`comment TEXT` posts to it; `comment #12 TEXT` posts to #12. Options go before the "
        + "thread (`comment --json 12 TEXT`) or alone after it (`comment 12 --edit`); text may "
        + "not start with one. Without TEXT, reads lines until a line holding a single `.`; `\\e` on a line of "
        + "its own opens $VISUAL or $EDITOR.",
      "行の残りがそのまま本文です。プロンプトで現在のスレッドにいるときは、`comment 本文` は"
        + "そのスレッドへの投稿です。`comment #12 本文` は #12 への投稿です。オプションはスレッドの"
        + "前 (`comment --json 12 本文`) か、その後ろに単独で (`comment 12 --edit`) 置きます。"
        + "本文をオプションで始めることはできません。"
        + "本文がなければ「.」だけの行まで読みます。`\\e` だけの行で $VISUAL か $EDITOR を開きます。"),
    parameters: [thread, edit, TextParameter(kind: .afterThread)])

  static let thread = Argument<ThreadNumber>(
    help: Localized(
      "#12 (or 12 outside a thread); at the prompt the current thread when left out",
      "#12 (スレッドの外では 12 も)。プロンプトでは省くと現在のスレッド"), optional: true)
  static let edit = Flag(
    "edit", help: Localized("write the text in $VISUAL or $EDITOR", "本文を $VISUAL か $EDITOR で書く"))

  /// A line without text reads a draft, whatever else is wrong with it (scripts have no
  /// current thread, so the same parse as `run` decides).
  static func draftParts(_ words: CommandWords) -> [DraftPart] {
    let parsed = try? Invocation(
      words, info: info, insideThread: false, messages: Messages(japanese: false), lenient: true)
    guard let parsed else { return [] }
    return parsed[GlobalOptions.helpFlag] || !(parsed.text ?? "").isEmpty ? [] : [.block]
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let number = try session.thread(invocation[thread], example: "comment 12 TEXT")
    var text = invocation.text ?? ""
    if text.isEmpty {
      // The thread exists and may be read before any text is asked for; with the text given,
      // posting it finds out (one look at the thread, not two).
      _ = try session.board.thread(number)
      text = try session.savedDraftOrNew(
        session.messages.commentPrompt, for: .comment(thread: number), edit: invocation[edit])
    }
    let comment = try session.board.addComment(to: number, text: text)
    if let draft = session.activeDraft { session.discardDraft(draft) }
    // Nothing else arrived meanwhile: no need to echo it.
    session.navigation.posted(comment.number, in: number)
    if session.json {
      session.emit(comment.json)
    } else {
      print(session.messages.posted("\(number)/\(comment.number)"))
    }
    session.sayWhomMentionsMiss(text)
    return .next
  }
}
