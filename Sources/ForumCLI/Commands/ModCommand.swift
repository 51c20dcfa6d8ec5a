import Datastore
import Forum

/// `mod add @handle`, `mod remove @handle`, `mod list`: the board's owner chooses moderators.
enum ModCommand: ForumCommand {
  static let info = CommandInfo(
    name: "mod", usage: "mod add|remove|list [@USER]",
    summary: Localized(
      "the board's owner grants or revokes the moderator role",
      "掲示板の所有者がモデレーターを任命・解任する"),
    details: Localized(
      "Moderators may delete other people's public threads and comments; a tombstone stays. "
        + "The owner is the board's first user (SQLite) or the schema's owner or a member of "
        + "forum_owner (PostgreSQL). A change counts from the person's next command.",
      "モデレーターは他人の公開スレッドとコメントを削除でき、墓標が残ります。所有者は最初の"
        + "利用者 (SQLite)、またはスキーマの所有者か forum_owner のメンバー (PostgreSQL) です。"
        + "変更は相手の次のコマンドから有効です。"),
    arguments: 1...2)

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let messages = session.messages
    let words = invocation.positionals
    do {
      switch (words[0], words.count) {
      case ("add", 2), ("remove", 2):
        let adding = words[0] == "add"
        let user = try session.board.setModerator(handle: words[1], adding)
        if session.json {
          session.emit(user.json)
        } else {
          let handle = SafeText.sanitize(user.userName)
          print(adding ? messages.moderatorAdded(handle) : messages.moderatorRemoved(handle))
        }
      case ("list", 1):
        let users = try session.board.moderators()
        if session.json {
          session.emit(.object(["results": .array(users.map(\.json))]))
        } else if users.isEmpty {
          print(messages.noModerators)
        } else {
          for user in users {
            print("@\(SafeText.sanitize(user.userName))  \(SafeText.sanitize(user.displayName))")
          }
        }
      default:
        throw CLIError.usage(messages.modUsage)
      }
    } catch let error as DatastoreError where error.code == .noAccess {
      throw CLIError.refused(messages.ownerOnly, DatastoreError(.noAccess))
    }
    return .next
  }
}
