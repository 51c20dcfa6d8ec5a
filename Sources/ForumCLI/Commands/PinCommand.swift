import Datastore
import Forum

/// `pin N`, `unpin N`: a moderator or the board's owner keeps a thread at the top of `list`;
/// `lock N`, `unlock N`: closes a thread to new comments and replies. Both are flags the engine
/// enforces (`Board.rules`), so a member cannot set them, or comment on a locked thread, with
/// psql or through `forum serve` either; these commands only say what happened, in the reader's
/// language.
enum PinCommand: ForumCommand {
  static let name = "pin"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "keep a thread at the top of list (moderators and the owner)",
      "スレッドを list の先頭に固定する (モデレーターと所有者)"),
    details: Localized(
      "Pinned threads come first in `list`, marked 📌, for everyone; among them the latest "
        + "activity comes first. `unpin THREAD` puts it back in its place. Only moderators "
        + "and the board's owner may pin or unpin.",
      "固定したスレッドは全員の `list` の先頭に 📌 付きで並びます (固定したもの同士は新しい"
        + "順)。`unpin THREAD` で元に戻ります。固定と解除ができるのはモデレーターと掲示板の"
        + "所有者だけです。"),
    parameters: [thread])

  static let thread = Argument<ThreadNumber>(
    help: Localized(
      "12 or #12; at the prompt the current thread when left out",
      "12 か #12。プロンプトでは省くと現在のスレッド"), optional: true)

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try pin(true, invocation, in: session)
  }

  /// What `pin` and `unpin` share: the thread as it is afterwards, or the refusal.
  static func pin(_ on: Bool, _ invocation: Invocation, in session: Session) throws
    -> Session.Outcome
  {
    try flag(on ? "pin" : "unpin", invocation, in: session) { number in
      (
        try session.board.pin(number, on),
        on
          ? Localized("Pinned #\(number): it stays at the top of list.", "#\(number) を固定しました。")
          : Localized("Unpinned #\(number).", "#\(number) の固定を解除しました。")
      )
    }
  }

  /// What the flag commands share: the thread named (or the current one), flagged by `set`,
  /// printed as JSON or said in the reader's language.
  static func flag(
    _ command: String, _ invocation: Invocation, in session: Session,
    _ set: (Int) throws -> (ForumThread, Localized)
  ) throws -> Session.Outcome {
    let number = try session.thread(invocation[thread], example: command + " 12")
    let (thread, said) = try set(number)
    if session.json {
      session.emit(thread.json)
    } else {
      print(said.text(japanese: session.messages.japanese))
    }
    return .next
  }
}

enum UnpinCommand: ForumCommand {
  static let name = "unpin"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "put a pinned thread back in its place (moderators and the owner)",
      "スレッドの固定を解除する (モデレーターと所有者)"),
    parameters: [PinCommand.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try PinCommand.pin(false, invocation, in: session)
  }
}

enum LockCommand: ForumCommand {
  static let name = "lock"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "close a thread to new comments and replies (moderators and the owner)",
      "スレッドをロックして新しいコメントと返信を止める (モデレーターと所有者)"),
    details: Localized(
      "A locked thread stays readable, marked 🔒, but nobody adds a comment or a reply to "
        + "it, at the prompt, in scripts, through `forum serve` or with psql. `unlock THREAD` "
        + "opens it again. Only moderators and the board's owner may lock or unlock.",
      "ロックしたスレッドは 🔒 付きで読めますが、プロンプト、スクリプト、`forum serve`、psql の"
        + "どこからもコメントや返信はできません。`unlock THREAD` で元に戻ります。ロックと解除が"
        + "できるのはモデレーターと掲示板の所有者だけです。"),
    parameters: [PinCommand.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try lock(true, invocation, in: session)
  }

  static func lock(_ on: Bool, _ invocation: Invocation, in session: Session) throws
    -> Session.Outcome
  {
    try PinCommand.flag(on ? "lock" : "unlock", invocation, in: session) { number in
      (
        try session.board.lock(number, on),
        on
          ? Localized(
            "Locked #\(number): no new comments or replies.", "#\(number) をロックしました。")
          : Localized("Unlocked #\(number).", "#\(number) のロックを解除しました。")
      )
    }
  }
}

enum UnlockCommand: ForumCommand {
  static let name = "unlock"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "open a locked thread to comments again (moderators and the owner)",
      "スレッドのロックを解除する (モデレーターと所有者)"),
    parameters: [PinCommand.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try LockCommand.lock(false, invocation, in: session)
  }
}
