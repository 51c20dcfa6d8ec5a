import Datastore
import Forum

/// `mute`, `unmute`, `follow`, `unfollow`: a person's own marks on threads, kept on the board
/// (private to them, `Board+Preferences`), so every prompt and device of theirs sees them.
enum MuteCommand: ForumCommand {
  static let name = "mute"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "hide a thread from list, unread and notices", "スレッドを list、unread、通知から隠す"),
    details: Localized(
      "The thread stays on the board and `show` still opens it; `list` says how many it "
        + "hid. `unmute THREAD` brings it back. Muting a followed thread stops following it.",
      "スレッドは残り、`show` で開けます。`list` は隠した数を示します。`unmute THREAD` で"
        + "戻ります。フォロー中のスレッドをミュートするとフォローは解除されます。"),
    parameters: [ThreadMarking.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try ThreadMarking.set(.mute, on: true, invocation, in: session)
  }
}

enum UnmuteCommand: ForumCommand {
  static let name = "unmute"
  static let info = CommandInfo(
    name: name, summary: Localized("show a muted thread again", "ミュートしたスレッドを戻す"),
    parameters: [ThreadMarking.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try ThreadMarking.set(.mute, on: false, invocation, in: session)
  }
}

enum FollowCommand: ForumCommand {
  static let name = "follow"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "tell a thread's new comments wherever you are", "スレッドの新しいコメントをどこにいても通知する"),
    details: Localized(
      "At the prompt, each new comment by someone else in the thread is told above the "
        + "prompt with its reference (`#12/14 … — show 12/14`), whatever thread you are in. "
        + "`unfollow THREAD` stops it.",
      "プロンプトでは、そのスレッドに他の人が書いた新しいコメントを、どのスレッドにいても"
        + "参照付きで (`#12/14 … — show 12/14`) 通知します。`unfollow THREAD` でやめます。"),
    parameters: [ThreadMarking.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try ThreadMarking.set(.follow, on: true, invocation, in: session)
  }
}

enum UnfollowCommand: ForumCommand {
  static let name = "unfollow"
  static let info = CommandInfo(
    name: name, summary: Localized("stop following a thread", "スレッドのフォローをやめる"),
    parameters: [ThreadMarking.thread])

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try ThreadMarking.set(.follow, on: false, invocation, in: session)
  }
}

/// What the four commands share.
enum ThreadMarking {
  static let thread = Argument<ThreadNumber>(
    help: Localized(
      "12 or #12; at the prompt the current thread when left out",
      "12 か #12。プロンプトでは省くと現在のスレッド"), optional: true)

  static func set(
    _ mark: Board.ThreadMark, on: Bool, _ invocation: Invocation, in session: Session
  ) throws -> Session.Outcome {
    let example = (on ? "" : "un") + mark.rawValue + " 12"
    let number = try session.thread(invocation[thread], example: example)
    let changed =
      on ? try session.board.mark(number, mark) : try session.board.unmark(number, mark)
    session.live.marks = try? session.board.marks()
    if session.json {
      session.emit(
        .object([
          "thread": .int(Int64(number)), mark == .mute ? "muted" : "following": .bool(on),
          "changed": .bool(changed),
        ]))
      return .next
    }
    let messages = session.messages
    switch (mark, on) {
    case (.mute, true): print(messages.muted(number, already: !changed))
    case (.mute, false): print(messages.unmuted(number, was: changed))
    case (.follow, true): print(messages.followed(number, already: !changed))
    case (.follow, false): print(messages.unfollowed(number, was: changed))
    }
    return .next
  }
}
