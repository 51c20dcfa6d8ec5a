import Datastore

/// What the ssh door says (`SSHDoor/`).
extension Messages {
  func badFingerprint(_ given: String) -> String {
    pick(
      "not a key fingerprint: \(given) (expected SHA256: and 43 base64 characters)",
      "鍵のフィンガープリントではありません: \(given) (SHA256: と base64 の 43 文字)")
  }
  var keyBanned: String {
    pick(
      "this key is banned from the board.", "この鍵はこの掲示板から締め出されています。")
  }
  func doorChoosesThis(_ option: String) -> String {
    pick(
      "\(option) is not yours to choose over ssh: your key is who you are on this board",
      "ssh では \(option) は指定できません: この掲示板ではあなたの鍵があなたです")
  }
  var doorBoardHasNoOwner: String {
    pick(
      "this board has no owner yet: its owner opens it once with forum on its host first (a board's first user is its owner)",
      "この掲示板にはまだ所有者がいません: 所有者がホストで一度 forum で開いてください (掲示板の最初のユーザーが所有者です)")
  }
  var doorWelcome: String {
    pick(
      "Welcome! Your key is your identity here: the same key is the same member every time.",
      "ようこそ。この鍵があなたの身元です: 同じ鍵なら毎回同じメンバーです。")
  }
  var doorNamePrompt: String { pick("Your display name: ", "表示名: ") }
  func doorCannotWrite(_ location: String, user: String) -> String {
    pick(
      "the ssh door cannot write the board \(location): it and its folder must be writable by the user \(user)",
      "ssh の入口は掲示板 \(location) に書き込めません: ファイルとフォルダをユーザー \(user) が書き込めるようにしてください")
  }
  var doorImageFromStandardInput: String {
    pick(
      "over ssh a picture comes from your own disk on standard input: ssh board@host new --title T --image - < photo.jpg",
      "ssh では画像は標準入力から送ります: ssh board@host new --title T --image - < photo.jpg")
  }
  var doorSaveToStandardOutput: String {
    pick(
      "over ssh an image is saved on your side: ssh board@host image N --save - > picture",
      "ssh では画像は手元に保存します: ssh board@host image N --save - > picture")
  }
  var imageFromTerminal: String {
    pick(
      "--image - reads the picture from standard input: pipe it in (… --image - < photo.jpg)",
      "--image - は標準入力から画像を読みます: パイプで渡してください (… --image - < photo.jpg)")
  }
  var banKeyOnlyOverSSH: String {
    pick(
      "keys are banned through the ssh door: ssh board@host mod ban-key SHA256:…",
      "鍵の締め出しは ssh の入口から行います: ssh board@host mod ban-key SHA256:…")
  }
  func keysBanned(_ keys: [String], _ banned: Bool) -> String {
    let list = keys.joined(separator: " ")
    return banned
      ? pick("Banned: \(list) (their posts stay).", "締め出しました: \(list) (投稿は残ります)。")
      : pick("Allowed again: \(list)", "締め出しを解除しました: \(list)")
  }
  func postsPerMinuteIs(_ count: Int?) -> String {
    guard let count else {
      return pick(
        "The board sets no posting budget (the ssh door's default holds).",
        "掲示板は投稿数の上限を決めていません (ssh の入口の既定値が使われます)。")
    }
    return count == 0
      ? pick("The board's posting budget: none (no limit).", "掲示板の投稿数の上限: なし (無制限)。")
      : pick(
        "The board's posting budget: \(count) posts a minute for each key.",
        "掲示板の投稿数の上限: 鍵ごとに毎分 \(count) 件。")
  }
  // The door's and the board's refusals, from the catalogue (Refusals).
  var noMemberOfKey: String { DoorReason.noMemberOfKey.wording.text(japanese: japanese) }
  var cannotBanOwnKey: String {
    BoardReason.cannotBanYourself.wording(for: .person).text(japanese: japanese)
  }
}

extension Messages {
  func doorPlainWord(_ word: String) -> String {
    pick(
      "the ssh door's paths must be plain (letters, digits, / . _ - + : @ % = , ~): \(word)",
      "ssh の入口のパスは英数字と / . _ - + : @ % = , ~ だけにしてください: \(word)")
  }
  func doorBadLocation(_ word: String) -> String {
    pick(
      "the ssh door's board location must be printable ASCII without blanks, quotes or "
        + "backslashes: \(word)",
      "ssh の入口のボードの場所は空白・引用符・バックスラッシュのない ASCII にしてください: \(word)")
  }
  var doorLocationPassword: String {
    pick(
      "the ssh door's board location must not hold a password (every process listing shows it): "
        + "use peer authentication on a local socket or the door user's ~/.pgpass",
      "ssh の入口のボードの場所にパスワードを書かないでください (プロセス一覧に見えます): "
        + "ローカルソケットの peer 認証か、入口のユーザーの ~/.pgpass を使ってください")
  }
  var doorShellOnly: String {
    pick(
      "this account only opens the forum board: ssh -t board@host",
      "このアカウントは掲示板を開くだけです: ssh -t board@host")
  }
}

extension Messages {
  var doorSetupNeedsRoot: String {
    pick(
      "ssh-setup --apply makes a user and writes sshd's files: run it as root",
      "ssh-setup --apply はユーザーを作り sshd の設定を書きます: root で実行してください")
  }
  func doorSetupDone(_ user: String, _ config: String) -> String {
    pick(
      "Done. Check and reload sshd (sshd -t && systemctl reload ssh); members join with: ssh -t \(user)@HOST (sshd's lines: \(config))",
      "完了しました。sshd を確認して再読み込みしてください (sshd -t && systemctl reload ssh)。参加は: ssh -t \(user)@HOST (設定: \(config))"
    )
  }
}

extension Messages {
  func doorBoardFolderShared(_ folder: String) -> String {
    pick(
      "the board's folder \(folder) is shared: give the board a folder of its own for the door's "
        + "user to own (e.g. /srv/forum/board.sqlite)",
      "掲示板のフォルダ \(folder) は共有されています: 入口のユーザーが所有する専用のフォルダに"
        + "置いてください (例 /srv/forum/board.sqlite)")
  }
}

extension Messages {
  func storagePerMemberIs(_ shown: String?) -> String {
    guard let shown else {
      return pick(
        "The board sets no storage per member (forum serve --storage-per-user alone bounds app users).",
        "掲示板はメンバーごとの保存量の上限を決めていません (アプリのユーザーは forum serve --storage-per-user のみ)。")
    }
    return pick(
      "The board's storage per member: \(shown).", "掲示板のメンバーごとの保存量の上限: \(shown)。")
  }
  func storagePerMemberUsage(_ text: String) -> String {
    pick(
      "storage-per-member takes a number of MiB from 1 to 1048576, or off; not '\(text)'",
      "storage-per-member は 1〜1048576 の MiB 数か off で指定してください ('\(text)' ではなく)")
  }
}
