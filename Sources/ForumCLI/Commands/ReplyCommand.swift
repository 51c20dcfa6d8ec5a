import Datastore
import Forum

/// `reply 12/3 TEXT`: a comment in #12 answering comment 3, shown under a one-line quote of it.
enum ReplyCommand: ForumCommand {
  static let name = "reply"
  static let aliases = ["r"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "comment on a thread answering one of its comments", "スレッドのコメントに返信"),
    details: Localized(
      "`reply 12/3 TEXT` posts TEXT (the rest of the line, exactly as typed) to #12 as an answer "
        + "to comment 3; it is shown under a one-line quote of that comment. Inside a thread at "
        + "the prompt `reply /3 TEXT` answers its comment 3. Without TEXT, reads lines until a "
        + "line holding a single `.`.",
      "`reply 12/3 本文` は #12 にコメント 3 への返信として本文 (行の残りそのまま) を投稿し、"
        + "そのコメントの 1 行の引用の下に表示されます。プロンプトでスレッドにいるときは "
        + "`reply /3 本文` です。本文がなければ「.」だけの行まで読みます。"),
    parameters: [comment, edit, TextParameter(kind: .afterReference)])

  static let comment = Argument<PostRef>(
    "THREAD/COMMENT",
    help: Localized("the comment answered: 12/3, or /3 in a thread", "返信先のコメント: 12/3、スレッド内では /3"))
  static let edit = Flag(
    "edit", help: Localized("write the text in $VISUAL or $EDITOR", "本文を $VISUAL か $EDITOR で書く"))

  static func draftParts(_ words: CommandWords) -> [DraftPart] {
    let parsed = try? Invocation(
      words, info: info, insideThread: false, messages: Messages(japanese: false), lenient: true)
    guard let parsed else { return [] }
    return parsed[GlobalOptions.helpFlag] || !(parsed.text ?? "").isEmpty ? [] : [.block]
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    guard
      case .comment(let threadNumber, let number) = try session.resolve(invocation[comment]!)
    else { throw CLIError.usage(session.messages.replyNeedsComment) }
    // The comment exists and may be read: ask for text only then.
    _ = try session.board.comment(number, inThread: threadNumber)
    var text = invocation.text ?? ""
    if text.isEmpty {
      text = try session.savedDraftOrNew(
        session.messages.commentPrompt, for: .reply(thread: threadNumber, comment: number),
        edit: invocation[edit])
    }
    let comment = try session.board.addComment(to: threadNumber, text: text, replyTo: number)
    if let draft = session.activeDraft { session.discardDraft(draft) }
    // Nothing else arrived meanwhile: no need to echo it.
    session.navigation.posted(comment.number, in: threadNumber)
    if session.json {
      session.emit(comment.json)
    } else {
      print(session.messages.posted("\(threadNumber)/\(comment.number)"))
    }
    session.sayWhomMentionsMiss(text)
    return .next
  }
}
