import Datastore
import Forum

/// `mod add @handle`, `mod remove @handle`, `mod list`: the board's owner chooses moderators.
/// `mod ban-key SHA256:…|@handle`, `mod unban-key …`: moderators and the owner ban a member
/// (by the key they came in with at the ssh door, or by handle): a fact of the board, which the
/// engine enforces (the member writes nothing, on any path); their posts stay.
/// `mod posts-per-minute [N|off]`: the board's posting budget, which the ssh door holds keys to.
/// `mod limits`: every limit the board and `forum serve` hold people to, with its value and where
/// it comes from; `mod storage-per-member [MIB|off]`: the owner's bound on what one member stores.
enum ModCommand: ForumCommand {
  static let name = "mod"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "the board's owner grants or revokes the moderator role",
      "掲示板の所有者がモデレーターを任命・解任する"),
    details: Localized(
      "Moderators may delete other people's public threads and comments; a tombstone stays. "
        + "The owner is the board's first user (SQLite) or the schema's owner or a member of "
        + "forum_owner (PostgreSQL). A change counts from the person's next command. Moderators "
        + "and the owner ban a member with mod ban-key SHA256:…|@handle (a key only through the "
        + "ssh door): they may read, not write; their posts stay. mod posts-per-minute N|off sets "
        + "the board's posting budget, which the ssh door holds each key to. mod limits lists "
        + "every limit with its value and where it comes from; the owner sets the storage per "
        + "member with mod storage-per-member MIB|off (forum serve holds app users to it from "
        + "their next write; on PostgreSQL the database holds members to it too).",
      "モデレーターは他人の公開スレッドとコメントを削除でき、墓標が残ります。所有者は最初の"
        + "利用者 (SQLite)、またはスキーマの所有者か forum_owner のメンバー (PostgreSQL) です。"
        + "変更は相手の次のコマンドから有効です。"
        + "モデレーターと所有者は mod ban-key SHA256:…|@ハンドル でメンバーを締め出せます "
        + "(鍵は ssh の入口から)。読めますが書き込めません。投稿は残ります。"
        + "mod posts-per-minute N|off で掲示板の毎分の投稿数を設定します (ssh の入口で鍵ごとに適用)。"
        + "mod limits ですべての上限とその出どころを表示します。所有者は mod storage-per-member "
        + "MIB|off でメンバーごとの保存量の上限を設定します (forum serve は次の書き込みから適用し、"
        + "PostgreSQL ではデータベースがメンバーにも適用します)。"),
    parameters: [action, user])

  enum Action: String, CaseIterable, ArgumentValue {
    case add, remove, list
    case banKey = "ban-key"
    case unbanKey = "unban-key"
    case postsPerMinute = "posts-per-minute"
    case limits
    case storagePerMember = "storage-per-member"
    static var valueName: String { allCases.map(\.rawValue).joined(separator: "|") }
    static var completion: Completion { .words(allCases.map(\.rawValue)) }
    init(parsing word: String, messages: Messages) throws {
      guard let action = Action(rawValue: word) else { throw CLIError.usage(messages.modUsage) }
      self = action
    }
  }

  static let action = Argument<Action>()
  static let user = Argument<Handle>("@USER", optional: true)

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let messages = session.messages
    switch (invocation[action]!, invocation[user]) {
    case (.add, let handle?), (.remove, let handle?):
      let adding = invocation[action] == .add
      let user = try session.board.setModerator(handle: handle.text, adding)
      if session.json {
        session.emit(user.json)
      } else {
        let handle = SafeText.sanitize(user.userName)
        print(adding ? messages.moderatorAdded(handle) : messages.moderatorRemoved(handle))
      }
    case (.banKey, let target?), (.unbanKey, let target?):
      try ban(target.text, invocation[action] == .banKey, in: session)
    case (.postsPerMinute, let value):
      try postsPerMinute(value?.text, in: session)
    case (.limits, nil):
      try ModLimits.show(in: session)
    case (.storagePerMember, let value):
      try ModLimits.storagePerMember(value?.text, in: session)
    case (.list, nil):
      let users: [User]
      var onlyYou = false
      do {
        users = try session.board.moderators()
      } catch let error as DatastoreError
        where error.reason == .board(.onlyOwnerListsModerators) && session.board.isModerator
      {
        // Only the owner reads the role's members; a moderator knows one of them: themself.
        users = [session.board.me]
        onlyYou = true
      }
      if session.json {
        session.emit(.object(["results": .array(users.map(\.json))]))
      } else if users.isEmpty {
        print(messages.noModerators)
      } else {
        for user in users {
          print("@\(SafeText.sanitize(user.userName))  \(SafeText.sanitize(user.displayName))")
        }
        if onlyYou { print(session.style.dim(messages.moderatorListOwnerOnly)) }
      }
    default:
      throw CLIError.usage(messages.modUsage)
    }
    return .next
  }

  /// Bans or allows again the member a key came in as (through the ssh door, which knows its
  /// keys' members) or a member by handle: the board's role, which its engine enforces.
  private static func ban(_ target: String, _ banning: Bool, in session: Session) throws {
    let messages = session.messages
    let userId: String
    var label = target
    if target.hasPrefix("SHA256:") {
      let key = try SSHFingerprint(parsing: target, messages: messages)
      guard let door = session.options.door else {
        throw CLIError.usage(messages.banKeyOnlyOverSSH)
      }
      if banning && key == door.key { throw CLIError.usage(messages.cannotBanOwnKey) }
      guard let member = door.state.member(of: key) else {
        throw CLIError.notFound(messages.noMemberOfKey)
      }
      userId = member
      label = key.text
    } else {
      let user = try session.board.user(handle: target)
      userId = user.objectId
      label = "@" + user.userName
    }
    if banning && userId == session.board.myId {
      throw CLIError.usage(messages.cannotBanOwnKey)
    }
    try session.board.setBanned(userId: userId, banning)
    if session.json {
      session.emit(
        .object([
          "banned": .bool(banning), "objectId": .string(userId), "target": .string(label),
        ]))
    } else {
      print(messages.keysBanned([SafeText.sanitize(label)], banning))
    }
  }

  /// Shows, sets or (with `off`) clears the board's posting budget.
  private static func postsPerMinute(_ value: String?, in session: Session) throws {
    let messages = session.messages
    if let value {
      let count: Int?
      if value == "off" {
        count = nil
      } else if let number = Int(value), number >= 0, number <= 100_000 {
        count = number
      } else {
        throw CLIError.usage(messages.notANumber("posts-per-minute", SafeText.sanitize(value)))
      }
      try session.board.setPostsPerMinute(count)
    }
    let current = try session.board.postsPerMinute()
    if session.json {
      session.emit(.object(["postsPerMinute": current.map { JSONValue.int(Int64($0)) } ?? .null]))
    } else {
      print(messages.postsPerMinuteIs(current))
    }
  }
}
