import Datastore
import Forum

/// `mod add @handle`, `mod remove @handle`, `mod list`: the board's owner chooses moderators.
/// `mod ban-key SHA256:…|@handle`, `mod unban-key …`: through the ssh door, moderators and the
/// owner keep a key (or every key a member came in with) out; the member's posts stay.
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
        + "forum_owner (PostgreSQL). A change counts from the person's next command. Through the "
        + "ssh door, moderators ban a key with mod ban-key SHA256:…|@handle (its posts stay).",
      "モデレーターは他人の公開スレッドとコメントを削除でき、墓標が残ります。所有者は最初の"
        + "利用者 (SQLite)、またはスキーマの所有者か forum_owner のメンバー (PostgreSQL) です。"
        + "変更は相手の次のコマンドから有効です。"
        + "ssh の入口では mod ban-key SHA256:…|@ハンドル で鍵を締め出せます (投稿は残ります)。"),
    parameters: [action, user])

  enum Action: String, CaseIterable, ArgumentValue {
    case add, remove, list
    case banKey = "ban-key"
    case unbanKey = "unban-key"
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
      try banKeys(target.text, invocation[action] == .banKey, in: session)
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

  /// Bans or allows again a key, or every key a member came in with, in the door's state.
  private static func banKeys(_ target: String, _ banning: Bool, in session: Session) throws {
    let messages = session.messages
    guard let door = session.options.door else {
      throw CLIError.usage(messages.banKeyOnlyOverSSH)
    }
    guard try session.board.isModerator || session.board.isOwner() else {
      throw DatastoreError(.noAccess, reason: DoorReason.onlyModeratorsBanKeys)
    }
    var keys: [SSHFingerprint]
    if target.hasPrefix("SHA256:") {
      keys = [try SSHFingerprint(parsing: target, messages: messages)]
    } else {
      let user = try session.board.user(handle: target)
      keys = door.state.keys(ofUser: user.objectId)
      guard !keys.isEmpty else { throw CLIError.notFound(messages.noKeysOfMember) }
    }
    if banning && keys.contains(door.key) { throw CLIError.usage(messages.cannotBanOwnKey) }
    try door.state.setBanned(keys, banning)
    if session.json {
      session.emit(
        .object([
          "banned": .bool(banning), "keys": .array(keys.map { .string($0.text) }),
        ]))
    } else {
      print(messages.keysBanned(keys.map(\.text), banning))
    }
  }
}
