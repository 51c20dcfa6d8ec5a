/// The datastore's own reasons (`Reason.store`).
public enum StoreReason: Sendable, Equatable, Codable {
  /// What a ban's refusal says, on every engine (PostgreSQL's trigger raises these words).
  public static let bannedWords = "you are banned from this board: you may read, not write"
  /// A file of `bytes` over the board's `limit`.
  case fileTooLarge(bytes: Int, limit: Int)
  /// A pointer names a user that does not exist.
  case noSuchUser
  /// A parent named by `field` does not exist (or cannot be read).
  case noSuchParent(field: String)
  /// A unique value (an object id, a file name, a pair) is taken.
  case alreadyExists
  case noSuchFile(String)
  /// The owner field names someone other than the caller.
  case mustBeYou(field: String)
  case onlyYouMayWrite
  case usersAreMadeBySigningIn
  case writersMustStayTheAuthor
  /// A flag (`FlagRule`) that only the board's owner and members of `role` set or clear.
  case onlyRoleMaySet(field: String, role: String)
  /// Bytes from outside (a terminal, a pipe, a file) that are not UTF-8.
  case notUTF8
  /// A PostgreSQL board set up by an older forum: `forum init` brings it up to date (`owner`:
  /// the caller owns the schema, so may run it).
  case olderSchema(owner: Bool)
  /// One answer's objects would cost more than `budget` to build (`Query.costBudget`).
  case answerTooLarge(budget: Int)
  /// A member's objects would hold `bytes`, over the board's storage per member `limit`
  /// (PostgreSQL's `forum.within_member_storage`).
  case memberStorageFull(bytes: Int, limit: Int)
  /// The caller is in the banned role (`StewardRule`): they write nothing on this board.
  case banned
  /// The parent `field` points at is locked (`FlagRule.locksChildren`): no new children.
  case parentLocked(field: String)

  /// The member storage refusal PostgreSQL raises in these words (`forum.within_member_storage`,
  /// whose schema step fixes them), as its value; nil for any other words.
  public static func memberStorage(raised message: String) -> StoreReason? {
    let words = message.split(separator: " ")
    guard words.count == 13, let bytes = Int(words[4]), let limit = Int(words[11]) else {
      return nil
    }
    let reason = StoreReason.memberStorageFull(bytes: bytes, limit: limit)
    return reason.wording(field: nil, for: .program).english == message ? reason : nil
  }

  /// The reason an engine's SQL raised in these words (its English for a program), or nil for
  /// any other words: the one list of reasons a trigger or function raises, read back alike by
  /// every engine (SQLite's `TriggerRefusal`, PostgreSQL's `PostgresRefusal`). A new one is a
  /// line here and the words its SQL raises (`raisedWords`).
  public static func raised(_ words: String) -> StoreReason? {
    if words == bannedWords { return .banned }
    if words.hasPrefix("the "), words.hasSuffix(" is locked") {
      let field = String(words.dropFirst(4).dropLast(10))
      let isName = !field.isEmpty && field.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "_") }
      return isName ? .parentLocked(field: field) : nil
    }
    return memberStorage(raised: words)
  }

  /// The words an engine's SQL raises for this reason, which `raised` reads back.
  public var raisedWords: String { wording(field: nil, for: .program).english }

  /// `field`: the field the refused error names (`DatastoreError.field`).
  public func wording(field: String?, for reader: Reader) -> Wording {
    let named = FieldName.inside(field ?? "value")
    switch self {
    case .fileTooLarge(let bytes, let limit):
      // A person's file is an image: the CLI attaches nothing else.
      return reader == .person
        ? Wording(
          "image is too large: \(bytes) bytes, the limit is \(limit)",
          "画像が大きすぎます (\(bytes) バイト、上限は \(limit) バイト)。")
        : Wording(
          "\(bytes) bytes, the limit is \(limit)", "ファイルが大きすぎます (\(bytes) バイト、上限は \(limit) バイト)。")
    case .noSuchUser: return Wording("no such user", "そのユーザーはいません。")
    case .noSuchParent(let field):
      return Wording("no such \(field)", "\(FieldName.inside(field).japanese)の指す先がありません。")
    case .alreadyExists: return Wording("already exists", "\(named.japanese)はすでに使われています。")
    case .noSuchFile(let name): return Wording("there is no file \(name)", "ファイル \(name) はありません。")
    case .mustBeYou(let field):
      return Wording("\(field) must be you", "\(FieldName.inside(field).japanese)はあなたでなければなりません。")
    case .onlyYouMayWrite: return Wording("only you may be the writer", "書き込めるのはあなただけでなければなりません。")
    case .usersAreMadeBySigningIn:
      return Wording("users are made by signing in", "ユーザーはサインインで作られます。")
    case .writersMustStayTheAuthor:
      return Wording("the writers must stay the author", "書き込める人は投稿者のままでなければなりません。")
    case .onlyRoleMaySet(let field, let role):
      return Wording(
        "only the board's owner and role:\(role) may set \(field)",
        "\(FieldName.inside(field).japanese)を設定できるのは掲示板の所有者と role:\(role) だけです。")
    case .notUTF8: return Wording("not valid UTF-8", "\(named.japanese)が正しい UTF-8 ではありません。")
    case .olderSchema(let owner):
      return Wording(
        "this board was set up by an older forum: " + (owner ? "run" : "its owner must run")
          + " `forum init --db URI` once to bring it up to date",
        "この掲示板は古い forum で作られています。\(owner ? "" : "掲示板の持ち主が ")"
          + "`forum init --db URI` を一度実行してください")
    case .answerTooLarge(let budget):
      let megabytes = budget / 1_048_576
      return Wording(
        "the objects asked for are larger than one answer holds (\(megabytes) MiB to build); "
          + "ask for fewer",
        "求めたオブジェクトは一度の応答に収まりません (組み立てに \(megabytes) MiB 以上)。数を減らしてください")
    case .memberStorageFull(let bytes, let limit):
      return Wording(
        "your objects would hold \(bytes) bytes; the storage per user is \(limit) bytes",
        "あなたのオブジェクトが \(bytes) バイトになります。1 人あたりの保存容量は \(limit) バイトまでです。")
    case .banned:
      return Wording(StoreReason.bannedWords, "この掲示板から締め出されています。読むことはできますが、書き込めません")
    case .parentLocked(let field):
      return Wording("the \(field) is locked", "\(field) はロックされています。新しい投稿はできません。")
    }
  }
}

/// Why a password login was refused: one reason for an unknown name and a wrong password
/// (`Reason.account`).
public enum AccountReason: Sendable, Equatable, Codable {
  case wrongPassword

  public var wording: Wording {
    switch self {
    case .wrongPassword:
      return Wording("the user name or the password is wrong", "ユーザー名かパスワードが違います。")
    }
  }
}
