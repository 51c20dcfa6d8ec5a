/// Why the board refused or found nothing, as a value with its arguments (`Reason.board`).
public enum BoardReason: Sendable, Equatable, Codable {
  case noThread(Int)
  case noComment(thread: Int, comment: Int)
  /// `label` (`#12`, `12/3`) was taken down.
  case takenDown(label: String)
  case noUser(handle: String)
  /// A name that is no handle and no one's display name (not repeated: it may carry escapes).
  case noSuchUser
  /// Several people are called `name` (display names), and it is nobody's handle: the first
  /// few of their handles (well-formed, safe to repeat), and how many there are.
  case severalNamed(name: String, handles: [String], count: Int)
  case noConversation(handle: String)
  case noImage(thread: Int)
  case conversationNeedsSomeoneElse
  /// Thread numbers, comment numbers and pages start at 1.
  case startsAtOne(Numbered)
  /// A text over its limit of characters.
  case tooLong(field: String, characters: Int, limit: Int)
  /// A text over its limit of UTF-8 bytes.
  case tooManyBytes(field: String, bytes: Int, limit: Int)
  /// An app's object of a board class that would cost readers more than `limit` (its JSON
  /// bytes plus 64 a value).
  case tooCostlyToRead(cost: Int, limit: Int)
  case containsControlCharacters(field: String)
  case containsLineBreak(field: String)
  /// A character carrying more combining marks than `limit`.
  case tooManyMarks(field: String, marks: Int, limit: Int)
  /// A character made of more code points than `limit`.
  case tooManyCodePoints(field: String, codePoints: Int, limit: Int)
  case queryTooLong(limit: Int)
  case cannotBanYourself
  /// Bans are the board's role: moderators and the owner set it, and nobody bans the owner.
  case onlyModeratorsBan
  /// The posting budget is the board's setting: moderators and the owner set it.
  case onlyModeratorsSetPostingBudget
  case onlyOwnerChoosesModerators
  case onlyOwnerListsModerators
  /// The storage bound per member (`mod storage-per-member`) is the owner's alone.
  case onlyOwnerSetsMemberStorage
  /// Pinning is a flag only moderators and the board's owner set (`Board.rules`).
  case onlyModeratorsPin
  /// Someone else's post: only its `author` (and moderators, when deleting) may.
  case onlyAuthorMayDelete(author: String, label: String)
  case onlyAuthorMayEdit(author: String, label: String)
  case imageIsTheBoards
  case threadKeepsItsPicture
  /// A new thread's `fileName` names no file the caller may read: uploaded first, then named.
  case noSuchPicture(name: String)
  /// Only public threads are pinned (a pin leads everyone's `list`).
  case privateThreadNotPinned(Int)
  /// Locking is a flag only moderators and the board's owner set (`Board.rules`).
  case onlyModeratorsLock
  /// Only public threads are locked (as pinned: a flag is everyone's to see).
  case privateThreadNotLocked(Int)
  /// The thread is locked: no new comments or replies, from anyone.
  case threadLocked(Int)

  public enum Numbered: String, Sendable, Equatable, Codable {
    case thread, comment, pages
  }

  public func wording(for reader: Reader) -> Wording {
    switch self {
    case .noThread(let number):
      return Wording("there is no thread #\(number)", "スレッド #\(number) はありません。")
    case .noComment(let thread, let comment):
      return Wording(
        "there is no comment \(thread)/\(comment)", "コメント \(thread)/\(comment) はありません。")
    case .takenDown(let label):
      return Wording("\(label) was deleted by a moderator", "\(label) はモデレーターが削除しました。")
    case .noUser(let handle):
      return Wording("there is no user @\(handle)", "ユーザー @\(handle) はいません。")
    case .noSuchUser: return Wording("no such user", "そのユーザーはいません。")
    case .severalNamed(let name, let handles, let count):
      let list = BoardReason.handleList(handles, count: count)
      return Wording(
        "\(count) people are called \(name); say which by handle: " + list,
        "\(name) という名前の人が \(count) 人います。ハンドルで指定してください: " + list)
    case .noConversation(let handle):
      return Wording("no conversation with @\(handle) yet", "@\(handle) との会話はまだありません。")
    case .noImage(let thread):
      return Wording("thread #\(thread) has no image", "スレッド #\(thread) に画像はありません。")
    case .conversationNeedsSomeoneElse:
      return Wording("a conversation needs someone else", "会話には相手が必要です。")
    case .startsAtOne(.pages): return Wording("pages start at 1", "ページは 1 から始まります。")
    case .startsAtOne(.thread):
      return Wording("thread numbers start at 1", "スレッド番号は 1 から始まります。")
    case .startsAtOne(.comment):
      return Wording("comment numbers start at 1", "コメント番号は 1 から始まります。")
    case .tooLong(let field, let characters, let limit):
      let name = FieldName.head(field, for: reader)
      return Wording(
        "\(name.english) is \(characters) characters; the limit is \(limit)",
        "\(name.japanese)が長すぎます (\(characters) 文字、上限は \(limit) 文字)。")
    case .tooManyBytes(let field, let bytes, let limit):
      let name = FieldName.head(field, for: reader)
      return Wording(
        "\(name.english) is \(bytes) bytes of UTF-8; the limit is \(limit)",
        "\(name.japanese)が長すぎます (UTF-8 で \(bytes) バイト、上限は \(limit) バイト)。")
    case .tooCostlyToRead(let cost, let limit):
      return Wording(
        "object costs \(cost) bytes to read (its JSON plus 64 a value); the limit is \(limit)",
        "オブジェクトが大きすぎます (読み込みに \(cost) バイト相当、上限は \(limit))。")
    case .containsControlCharacters(let field):
      let name = FieldName.head(field, for: reader)
      return Wording(
        "\(name.english) must not contain control characters", "\(name.japanese)に制御文字は使えません。")
    case .containsLineBreak(let field):
      let name = FieldName.head(field, for: reader)
      return Wording(
        "\(name.english) must not contain a line break", "\(name.japanese)に改行は使えません。")
    case .tooManyMarks(let field, let marks, let limit):
      let name = FieldName.head(field, for: reader)
      return Wording(
        "\(name.english) has a character with \(marks) combining marks; at most \(limit)",
        "\(name.japanese)に結合文字が多すぎる文字があります (\(marks) 個、上限は \(limit) 個)。")
    case .tooManyCodePoints(let field, let codePoints, let limit):
      let name = FieldName.head(field, for: reader)
      return Wording(
        "\(name.english) has a character made of \(codePoints) code points; at most \(limit)",
        "\(name.japanese)にコードポイントが多すぎる文字があります (\(codePoints) 個、上限は \(limit) 個)。")
    case .queryTooLong(let limit):
      return Wording("longer than \(limit) characters", "検索語が長すぎます (上限は \(limit) 文字)。")
    case .cannotBanYourself: return Wording("you cannot ban yourself", "自分自身は締め出せません。")
    case .onlyModeratorsBan:
      return Wording(
        "only moderators and the board's owner may ban, and nobody bans the owner",
        "締め出せるのはモデレーターと所有者だけです (所有者は締め出せません)")
    case .onlyModeratorsSetPostingBudget:
      return Wording(
        "only moderators and the board's owner set the posting budget",
        "投稿数の上限を決められるのはモデレーターと所有者だけです")
    case .onlyOwnerChoosesModerators:
      return Wording("only the board's owner may choose moderators", "モデレーターを選べるのは掲示板の所有者だけです")
    case .onlyOwnerListsModerators:
      return Wording("only the board's owner may list moderators", "モデレーターの一覧を見られるのは掲示板の所有者だけです")
    case .onlyOwnerSetsMemberStorage:
      return Wording(
        "only the board's owner sets the storage per member",
        "メンバーごとの保存量の上限を決められるのは掲示板の所有者だけです")
    case .onlyModeratorsPin:
      return Wording(
        "only moderators and the board's owner may pin or unpin threads",
        "スレッドの固定と解除ができるのはモデレーターと掲示板の所有者だけです")
    case .onlyAuthorMayDelete(let author, let label):
      return Wording(
        "only \(author) (the author) and moderators may delete \(label)",
        "\(label) を削除できるのは投稿者の \(author) とモデレーターだけです")
    case .onlyAuthorMayEdit(let author, let label):
      return Wording(
        "only \(author) (the author) may edit \(label)", "\(label) を編集できるのは投稿者の \(author) だけです")
    case .imageIsTheBoards:
      return Wording("set by the board, not by apps", "画像は掲示板が設定します (アプリからは設定できません)。")
    case .threadKeepsItsPicture:
      return Wording("a thread keeps its picture", "スレッドの画像は変えられません。")
    case .noSuchPicture(let name):
      return Wording(
        "no file named \(name): upload the picture (POST files/NAME) before the thread names it",
        "\(name) という名前のファイルはありません。スレッドで指定する前に画像をアップロードしてください (POST files/NAME)。")
    case .privateThreadNotPinned(let number):
      return Wording(
        "#\(number) is private: only public threads are pinned",
        "#\(number) は非公開です。固定できるのは公開スレッドだけです。")
    case .onlyModeratorsLock:
      return Wording(
        "only moderators and the board's owner may lock or unlock threads",
        "スレッドのロックと解除ができるのはモデレーターと掲示板の所有者だけです")
    case .privateThreadNotLocked(let number):
      return Wording(
        "#\(number) is private: only public threads are locked",
        "#\(number) は非公開です。ロックできるのは公開スレッドだけです。")
    case .threadLocked(let number):
      return Wording(
        "thread #\(number) is locked: no new comments or replies",
        "スレッド #\(number) はロックされています。新しいコメントや返信はできません。")
    }
  }

  /// `@a, @b, … and N more`.
  public static func handleList(_ handles: [String], count: Int) -> String {
    handles.map { "@" + $0 }.joined(separator: ", ")
      + (count > handles.count ? ", … and \(count - handles.count) more" : "")
  }
}
