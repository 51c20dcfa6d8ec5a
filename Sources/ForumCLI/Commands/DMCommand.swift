import Datastore
import Forum

/// `dm`: a private message to one person, or the conversation with them.
enum DMCommand: ForumCommand {
  static let name = "dm"
  static let aliases = ["msg"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "send a private message, or show your conversation with someone",
      "個人宛てのメッセージを送る、またはその人との会話を表示"),
    details: Localized(
      "People are addressed by their unique handle (whoami shows yours; Tab completes them). "
        + "`dm @bob TEXT` sends TEXT, exactly as typed, starting the conversation if there is "
        + "none; only you and bob can ever read it. `dm @bob` opens the conversation as a room at "
        + "the prompt, like `chat` (elsewhere it shows its last page). `dm @bob --write` reads the message from lines up to a single `.`; `--edit` "
        + "opens $VISUAL or $EDITOR. You cannot message yourself.",
      "相手は一意のハンドルで指定します (自分のものは whoami、Tab で補完)。"
        + "`dm @bob 本文` は本文を入力どおりに送ります。会話がなければ始まり、読めるのはあなたと bob "
        + "だけです。`dm @bob` はプロンプトでは `chat` のようにルームとして開き、それ以外では最後のページを表示します。`dm @bob --write` は「.」だけの行"
        + "までをメッセージとして読み、`--edit` は $VISUAL か $EDITOR を開きます。自分自身には送れません。"),
    parameters: [handle, TextParameter(kind: .afterHandle), write, edit, page],
    collapsesOptions: true)

  static let handle = Argument<Handle>(optional: true)
  static let write = Flag(
    "write", help: Localized("write the message on lines up to a `.`", "「.」の行までメッセージを書く"))
  static let edit = Flag(
    "edit", help: Localized("write the text in $VISUAL or $EDITOR", "本文を $VISUAL か $EDITOR で書く"))
  static let page = Option<PageRequest>(
    "page",
    help: Localized("which page of the conversation (without it: the last)", "会話のページ (なければ最後)"))

  /// `--write` and `--edit` read a draft, whatever else is wrong with the line.
  static func draftParts(_ words: CommandWords) -> [DraftPart] {
    let parsed = try? Invocation(
      words, info: info, insideThread: false, messages: Messages(japanese: false), lenient: true)
    guard let parsed, !parsed[GlobalOptions.helpFlag], (parsed.text ?? "").isEmpty else {
      return []
    }
    return parsed[write] || parsed[edit] ? [.block] : []
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    guard let handle = invocation[handle]?.text else {
      throw CLIError.usage(session.messages.whichHandle)
    }
    let board = session.board
    // The person exists and is not you: checked before a draft is typed.
    let partner = try board.user(handle: handle)
    guard partner.objectId != board.myId else {
      throw CLIError.usage(session.messages.messageToYourself)
    }
    let address = "@" + partner.userName
    var text = invocation.text ?? ""
    let drafting = invocation[write] || invocation[edit]
    if text.isEmpty && !drafting {
      // At a terminal the conversation opens as a room, like `chat`; elsewhere it is shown.
      if session.atPrompt, session.input.isInteractive, session.terminal.stdoutIsTerminal,
        !session.json, invocation[Self.page] == nil
      {
        let room = ChatRoom(
          source: ChatRoom.conversation(with: partner, in: session), session: session)
        return try room.run()
      }
      try show(partner, invocation, in: session)
      return .next
    }
    if text.isEmpty {
      text = try session.savedDraftOrNew(
        session.messages.messagePrompt, for: .message(handle: partner.userName),
        edit: invocation[edit])
    }
    let message = try board.sendMessage(to: address, text: text)
    if let draft = session.activeDraft { session.discardDraft(draft) }
    if session.json {
      session.emit(message.json)
    } else {
      print(session.messages.sent(address, message.number))
    }
    return .next
  }

  /// The conversation with `partner`, its last page unless `--page` says otherwise.
  static func show(_ partner: User, _ invocation: Invocation, in session: Session) throws {
    let address = "@" + partner.userName
    let conversation: ForumConversation
    do {
      conversation = try session.board.conversation(with: address)
    } catch let error as DatastoreError
      where error.reason == .board(.noConversation(handle: partner.userName))
    {
      // No conversation yet is an empty one to look at; a page of it is the board's refusal.
      if invocation[Self.page] != nil { throw error }
      if session.json {
        session.emitPage([], page: 1, hasMore: false, count: 0, with: ["conversation": .null])
      } else {
        print(session.messages.noMessagesYet(address))
      }
      return
    }
    let last = try session.board.lastPage(of: conversation)
    let page = invocation[Self.page]?.number(last: last) ?? last
    if page > last {
      throw CLIError.notFound(session.messages.pastTheEnd(page, "dm \(address) --page \(last)"))
    }
    let messages = try session.board.messages(in: conversation, page: page)
    // What is shown is read (issue #12's read positions, per conversation).
    try session.board.markRead(
      conversation,
      upTo: messages.hasMore ? (messages.items.last?.number ?? 0) : conversation.lastMessageNumber)
    if session.json {
      session.emitPage(
        messages.items.map(\.json), page: page, hasMore: messages.hasMore,
        count: conversation.messageCount, with: ["conversation": conversation.json])
      return
    }
    session.printLines(session.renderer.conversation(conversation, page: messages, last: last))
  }
}

/// `inbox`: your conversations, most recent message first.
enum InboxCommand: ForumCommand {
  static let name = "inbox"
  static let aliases = ["dms"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "your conversations, most recent message first, 20 a page",
      "あなたの会話 (新しいメッセージ順、1 ページ 20 件)"),
    details: Localized(
      "Each row: the other person and their handle, the start of the last message (yours start "
        + "with \"you:\"), its age and how many messages you have not read. `dm @HANDLE` opens one.",
      "各行は相手とそのハンドル、最後のメッセージの冒頭 (自分のものは「あなた:」)、経過時間、"
        + "未読数です。`dm @ハンドル` で開きます。"),
    parameters: [page])

  static let page = Option<PageRequest>("page", value: "N", help: Localized("which page", "ページ"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let page = invocation[Self.page]?.number(last: 1) ?? 1
    let conversations = try session.board.conversations(page: page)
    if conversations.items.isEmpty && page > 1 {
      throw CLIError.notFound(session.messages.pastTheEnd(page, "inbox"))
    }
    if session.json {
      session.emitPage(
        conversations.items.map(\.json), page: page, hasMore: conversations.hasMore)
      return .next
    }
    session.printLines(session.renderer.inbox(conversations))
    return .next
  }
}
