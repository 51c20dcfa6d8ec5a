/// The command line's own reasons for refusing input (`Reason.input`).
public enum InputReason: Sendable, Equatable {
  /// The process's argument `index` (from 1) is not UTF-8.
  case argumentNotUTF8(Int)
  /// An answer to a question is longer than a line may be.
  case answerTooLong
  /// A draft typed or piped is longer than a post may be.
  case draftTooLong(limit: Int)
  /// A script's line over the longest line read; the line is skipped.
  case scriptLineTooLong(megabytes: Int)

  public func wording(for reader: Reader) -> Wording {
    switch self {
    case .argumentNotUTF8(let index):
      return Wording("argument \(index) is not valid UTF-8", "引数 \(index) が正しい UTF-8 ではありません。")
    case .answerTooLong: return Wording("line is too long", "入力行が長すぎます。")
    case .draftTooLong(let limit):
      let name = FieldName.head("text", for: reader)
      return Wording(
        "\(name.english) is longer than \(limit) characters",
        "\(name.japanese)が長すぎます (上限は \(limit) 文字)。")
    case .scriptLineTooLong(let megabytes):
      return Wording(
        "the line is longer than \(megabytes) MB; it was skipped", "\(megabytes) MB より長い行なので飛ばしました。"
      )
    }
  }
}

/// The ssh door's refusals (`Reason.door`): what a key may do.
public enum DoorReason: Sendable, Equatable {
  /// A key posted `perMinute` times in the last minute; the next may come in `wait` seconds.
  case postingBudgetSpent(perMinute: Int, wait: Int)
  /// No member has come in through the door with the key a moderator named.
  case noMemberOfKey
  /// The connecting address brought in its hour's budget of keys never seen before.
  case tooManyNewKeys
  /// The client's command (sshd's `SSH_ORIGINAL_COMMAND`) is not UTF-8.
  case commandNotUTF8
  /// The key holds `limit` sessions already.
  case tooManySessions(limit: Int)

  public var wording: Wording {
    switch self {
    case .postingBudgetSpent(let perMinute, let wait):
      return Wording(
        "slow down: a key may post \(perMinute) times a minute; try again in \(wait) s. "
          + "Nothing was posted.",
        "投稿が多すぎます: 鍵ごとに毎分 \(perMinute) 件までです。\(wait) 秒後にもう一度どうぞ。投稿していません。")
    case .noMemberOfKey:
      return Wording("no member has come in with that key yet", "その鍵で入ったメンバーはまだいません")
    case .tooManyNewKeys:
      return Wording(
        "too many new keys from this address; try again later.",
        "このアドレスからの新しい鍵が多すぎます。しばらくしてからもう一度どうぞ。")
    case .tooManySessions(let limit):
      return Wording(
        "this key has \(limit) sessions open already; close one first.",
        "この鍵はすでに \(limit) 個のセッションを開いています。どれかを閉じてからどうぞ。")
    case .commandNotUTF8:
      return Wording(
        "the command is not valid UTF-8; nothing was done",
        "コマンドが正しい UTF-8 ではありません。何もしていません。")
    }
  }
}

/// What failed on this machine, outside the board: a file the command line writes, the editor
/// it runs (`CLIError.local`). `error`: the system's words (`strerror`).
public enum LocalReason: Sendable, Equatable {
  case cannotWriteStandardOutput(error: String)
  /// `--save` was given a path that ends in `/` (or nothing).
  case namesDirectory(path: String)
  case isDirectory(path: String)
  case alreadyExists(path: String)
  case cannotWrite(path: String, error: String)
  case cannotCreateEditorFile(error: String)
  case cannotStartEditor(error: String)
  case editorFailed(command: String)
  case editorFileGone
  /// The ssh door's set-up and state (`ssh-setup`, `ssh-session`): a folder, a file, a user or a
  /// program of this machine.
  case cannotMake(path: String, error: String)
  case cannotOpen(path: String, error: String)
  case cannotChangeOwner(path: String, error: String)
  case noSystemUser(name: String)
  case cannotRun(program: String, error: String)
  case programFailed(command: String, status: Int32)
  case cannotLockDoorState

  public var wording: Wording {
    switch self {
    case .cannotWriteStandardOutput(let error):
      return Wording("cannot write to standard output: \(error)", "標準出力に書けません (\(error))")
    case .namesDirectory(let path):
      return Wording(
        "\(path) names a directory, not a file", "\(path) はディレクトリを指しています。ファイルを指定してください")
    case .isDirectory(let path): return Wording("\(path) is a directory", "\(path) はディレクトリです")
    case .alreadyExists(let path):
      return Wording(
        "\(path) already exists; add --force to replace it",
        "\(path) はすでにあります。置き換えるには --force を付けてください")
    case .cannotWrite(let path, let error):
      return Wording("cannot write \(path): \(error)", "\(path) に書けません (\(error))")
    case .cannotCreateEditorFile(let error):
      return Wording("cannot create a file for the editor: \(error)", "エディタ用のファイルを作れません (\(error))")
    case .cannotStartEditor(let error):
      return Wording("cannot start the editor: \(error)", "エディタを起動できません (\(error))")
    case .editorFailed(let command):
      return Wording(
        "the editor (\(command)) did not finish cleanly", "エディタ (\(command)) が正常に終了しませんでした")
    case .editorFileGone: return Wording("the editor's file is gone", "エディタのファイルがなくなりました")
    case .cannotMake(let path, let error):
      return Wording("cannot make \(path): \(error)", "\(path) を作れません (\(error))")
    case .cannotOpen(let path, let error):
      return Wording("cannot open \(path): \(error)", "\(path) を開けません (\(error))")
    case .cannotChangeOwner(let path, let error):
      return Wording("cannot chown \(path): \(error)", "\(path) の所有者を変えられません (\(error))")
    case .noSystemUser(let name):
      return Wording("cannot find the user \(name)", "ユーザー \(name) が見つかりません")
    case .cannotRun(let program, let error):
      return Wording("cannot run \(program): \(error)", "\(program) を実行できません (\(error))")
    case .programFailed(let command, let status):
      return Wording(
        "\(command) failed (status \(status))", "\(command) が失敗しました (終了状態 \(status))")
    case .cannotLockDoorState:
      return Wording("cannot lock the ssh door's state", "ssh の入口の状態をロックできません")
    }
  }
}
