import Forum

/// `whoami`: who you are on this board, and where it lives.
enum WhoamiCommand: ForumCommand {
  static let name = "whoami"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "your display name, @handle, user id, profile and database",
      "表示名、@ハンドル、ユーザー ID、プロファイル、データベース"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let board = session.board
    // It may ask nothing else: who you are is the server's answer, not only the profile's.
    try board.confirmYou()
    if session.json {
      session.emit(board.me.json)
      return .next
    }
    print(
      "\(session.style.mine(SafeText.sanitize(board.me.displayName))) "
        + "@\(SafeText.sanitize(board.me.userName))")
    let labels = session.messages.whoamiLabels
    let width = labels.map(SafeText.width).max() ?? 0
    func label(_ index: Int) -> String { SafeText.pad(labels[index] + ":", to: width + 2) }
    print(label(0) + board.myId)
    print(label(1) + "\(board.profileName) (\(SafeText.sanitize(board.profilePath)))")
    print(label(2) + SafeText.sanitize(board.location))
    return .next
  }
}

/// `name`: the rest of the line becomes your display name.
enum NameCommand: ForumCommand {
  static let name = "name"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "set your display name (1 to 40 characters), exactly as typed",
      "表示名を設定 (1〜40 文字、入力どおり)"),
    parameters: [TextParameter(kind: .rest, label: "NEW_NAME", optional: false)])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    guard let text = invocation.text, !text.isEmpty else {
      throw CLIError.usage(session.messages.usage(info.usage))
    }
    let user = try session.board.rename(to: text)
    if session.json {
      session.emit(user.json)
    } else {
      print(session.messages.renamed(SafeText.sanitize(user.displayName)))
    }
    return .next
  }
}

/// `leave`: ends the current thread at the prompt.
enum LeaveCommand: ForumCommand {
  static let name = "leave"
  static let aliases = ["back"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized("leave the current thread", "現在のスレッドを離れる"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    session.navigation.leave()
    return .next
  }
}

/// `help`: the list of commands, or one in detail.
enum HelpCommand: ForumCommand {
  static let name = "help"
  static let aliases = ["?"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized("this list, or one command in detail", "この一覧、またはコマンドの詳細"),
    parameters: [topic])

  static let topic = Argument<String>(
    "COMMAND", optional: true, completion: .commands)

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    if session.json {
      session.emit(
        try CommandRegistry.helpJSON(
          topic: invocation[topic], japanese: session.terminal.japanese))
      return .next
    }
    let text = try CommandRegistry.help(
      topic: invocation[topic], japanese: session.terminal.japanese,
      width: session.terminal.width)
    session.printLines(
      text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    return .next
  }
}

/// `quit`: leaves the prompt or ends a script.
enum QuitCommand: ForumCommand {
  static let name = "quit"
  static let aliases = ["exit", "q"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized("leave (Ctrl-D does too)", "終了 (Ctrl-D でも)"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    .quit
  }
}
