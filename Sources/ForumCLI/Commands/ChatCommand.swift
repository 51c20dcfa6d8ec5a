import Forum

/// `chat`: a thread as a live room (the chat seeds): its last 20 comments, then every line typed
/// is posted to it.
enum ChatCommand: ForumCommand {
  static let name = "chat"
  static let aliases = ["room"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "talk in a thread as in a chat room: every line you type is posted",
      "スレッドをチャットルームとして使う: 入力した行がそのまま投稿される"),
    details: Localized(
      "Shows the last 20 comments, then posts each line you type as a comment (no `comment` "
        + "needed); others' lines appear as they are sent, yours are marked (you). `/leave` or "
        + "Ctrl-D leaves the room; `/COMMAND` runs a command (`/show 3`, `/quit`); `//text` posts "
        + "a line that starts with `/`. A pasted line is always text, never a command; a paste of "
        + "several lines asks once: one message, one each, or none. Needs a terminal: scripts "
        + "post with `comment`.",
      "最新 20 件のコメントを表示し、その後は入力した各行をコメントとして投稿します (`comment` は"
        + "不要)。ほかの人の発言は送られた時点で表示され、自分の発言には (あなた) が付きます。"
        + "`/leave` か Ctrl-D で退出、`/コマンド` でコマンドを実行 (`/show 3`、`/quit`)、"
        + "`//本文` で `/` から始まる行を投稿します。貼り付けた行はコマンドにならず常に本文です。"
        + "複数行を貼り付けると、1 件で送るか、1 行ずつ送るか、送らないかを一度だけ尋ねます。"
        + "端末が必要です (スクリプトでは `comment`)。"),
    parameters: [thread])

  static let thread = Argument<ThreadNumber>(optional: true)

  /// A script cannot enter a room: the lines meant for it are said there, never run as
  /// commands, up to its `/leave`.
  static func draftParts(_ words: CommandWords) -> [DraftPart] {
    let parsed = try? Invocation(
      words, info: info, insideThread: false, messages: Messages(japanese: false))
    return parsed?[GlobalOptions.helpFlag] == true ? [] : [.room]
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    guard session.input.isInteractive, session.terminal.stdoutIsTerminal, !session.json else {
      throw CLIError.usage(session.messages.chatNeedsTerminal)
    }
    let number = try session.thread(invocation[Self.thread], example: "chat 12")
    let thread = try session.board.thread(number)
    let room = ChatRoom(source: ChatRoom.thread(thread, in: session), session: session)
    return try room.run()
  }
}
