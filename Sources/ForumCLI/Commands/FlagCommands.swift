import Datastore
import Forum

/// A moderator's flag on a thread as the command line shows it, declared once: its two
/// commands (`pin`/`unpin`, `lock`/`unlock`), what they say, and the marks `list` and `show`
/// print while it is set (`BoardRenderer`). The flag itself is an engine rule (`ThreadFlag`,
/// `Board.rules`), so a member cannot set it, or get around it, with psql or through
/// `forum serve` either; these commands only say what happened, in the reader's language.
struct FlagCommand: Sendable {
  let flag: ThreadFlag
  /// The commands that set and clear it.
  let set: String
  let clear: String
  let setSummary: Localized
  let clearSummary: Localized
  let details: Localized
  /// What `set N` and `clear N` say when done.
  let setSaid: @Sendable (Int) -> Localized
  let clearSaid: @Sendable (Int) -> Localized
  /// Before the title in `list` while set.
  let mark: String
  /// The line under the title in `show` while set (nil: none).
  let shown: (@Sendable (Int) -> Localized)?

  static let pin = FlagCommand(
    flag: .pin, set: "pin", clear: "unpin",
    setSummary: Localized(
      "keep a thread at the top of list (moderators and the owner)",
      "スレッドを list の先頭に固定する (モデレーターと所有者)"),
    clearSummary: Localized(
      "put a pinned thread back in its place (moderators and the owner)",
      "スレッドの固定を解除する (モデレーターと所有者)"),
    details: Localized(
      "Pinned threads come first in `list`, marked 📌, for everyone; among them the latest "
        + "activity comes first. `unpin THREAD` puts it back in its place. Only moderators "
        + "and the board's owner may pin or unpin.",
      "固定したスレッドは全員の `list` の先頭に 📌 付きで並びます (固定したもの同士は新しい"
        + "順)。`unpin THREAD` で元に戻ります。固定と解除ができるのはモデレーターと掲示板の"
        + "所有者だけです。"),
    setSaid: {
      Localized("Pinned #\($0): it stays at the top of list.", "#\($0) を固定しました。")
    },
    clearSaid: { Localized("Unpinned #\($0).", "#\($0) の固定を解除しました。") },
    mark: "📌", shown: nil)

  static let lock = FlagCommand(
    flag: .lock, set: "lock", clear: "unlock",
    setSummary: Localized(
      "close a thread to new comments and replies (moderators and the owner)",
      "スレッドをロックして新しいコメントと返信を止める (モデレーターと所有者)"),
    clearSummary: Localized(
      "open a locked thread to comments again (moderators and the owner)",
      "スレッドのロックを解除する (モデレーターと所有者)"),
    details: Localized(
      "A locked thread stays readable, marked 🔒, but nobody adds a comment or a reply to "
        + "it, at the prompt, in scripts, through `forum serve` or with psql. `unlock THREAD` "
        + "opens it again. Only moderators and the board's owner may lock or unlock.",
      "ロックしたスレッドは 🔒 付きで読めますが、プロンプト、スクリプト、`forum serve`、psql の"
        + "どこからもコメントや返信はできません。`unlock THREAD` で元に戻ります。ロックと解除が"
        + "できるのはモデレーターと掲示板の所有者だけです。"),
    setSaid: {
      Localized("Locked #\($0): no new comments or replies.", "#\($0) をロックしました。")
    },
    clearSaid: { Localized("Unlocked #\($0).", "#\($0) のロックを解除しました。") },
    mark: "🔒",
    // The catalogue's sentence, the one a refused comment gets.
    shown: {
      let locked = BoardReason.threadLocked($0).wording(for: .person)
      return Localized(locked.english, locked.japanese)
    })

  /// Every flag, in the order `list` marks them.
  static let all = [pin, lock]

  /// Their commands, in help's order (`CommandRegistry.all`).
  static let commands: [any ForumCommand.Type] = [
    PinCommand.self, UnpinCommand.self, LockCommand.self, UnlockCommand.self,
  ]

  static let thread = Argument<ThreadNumber>(
    help: Localized(
      "12 or #12; at the prompt the current thread when left out",
      "12 か #12。プロンプトでは省くと現在のスレッド"), optional: true)

  /// What every flag command does: the thread named (or the current one), flagged or not,
  /// printed as JSON or said in the reader's language.
  func run(_ on: Bool, _ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let number = try session.thread(
      invocation[FlagCommand.thread], example: (on ? set : clear) + " 12")
    let thread = try session.board.setFlag(flag, of: number, on)
    if session.json {
      session.emit(thread.json)
    } else {
      print((on ? setSaid : clearSaid)(number).text(japanese: session.messages.japanese))
    }
    return .next
  }
}

/// One of a `FlagCommand`'s two commands as a type, like every other command. Each is its
/// own concrete type, not one generic type per flag: a generic command's metadata is made at
/// start-up, and each of those searched every protocol conformance in the binary (four of them
/// cost a local `list` 320,000 instructions).
protocol FlagForumCommand: ForumCommand {
  static var declaration: FlagCommand { get }
  /// Whether it sets the flag (`pin`) or clears it (`unpin`).
  static var sets: Bool { get }
}

extension FlagForumCommand {
  static var name: String { sets ? declaration.set : declaration.clear }
  static var info: CommandInfo {
    CommandInfo(
      name: name, summary: sets ? declaration.setSummary : declaration.clearSummary,
      details: sets ? declaration.details : nil, parameters: [FlagCommand.thread])
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    try declaration.run(sets, invocation, in: session)
  }
}

enum PinCommand: FlagForumCommand {
  static var declaration: FlagCommand { .pin }
  static var sets: Bool { true }
}

enum UnpinCommand: FlagForumCommand {
  static var declaration: FlagCommand { .pin }
  static var sets: Bool { false }
}

enum LockCommand: FlagForumCommand {
  static var declaration: FlagCommand { .lock }
  static var sets: Bool { true }
}

enum UnlockCommand: FlagForumCommand {
  static var declaration: FlagCommand { .lock }
  static var sets: Bool { false }
}
