import Datastore

/// One person of the board as `who` lists them.
public struct Member: Sendable {
  public let user: User
  /// Their newest public thread or comment, or when they joined: what everyone may see of
  /// when they were last here (sessions and messages are private).
  public let lastActive: Int64
  /// Whether they moderate; nil when you may not know (only the owner reads the role's
  /// members, and you know your own).
  public let isModerator: Bool?
  public let isYou: Bool
}

/// The board's people: `who`, and handles understood without regard to case or by a unique
/// display name.
extension Board {
  /// Everyone (up to `limit`, the datastore has no string range queries), most recently active
  /// first.
  public func members(limit: Int = 1000) throws -> [Member] {
    let users = try client.find(
      Query(className: User.className, order: ["userName"], limit: min(1000, limit))
    ).map(User.init(object:))
    let moderators =
      (try? isOwner()) == true ? try? Set(client.members(ofRole: Board.moderatorRole)) : nil
    return try users.map { user in
      var latest = user.object.createDate
      for className in [Board.threadClass, Board.commentClass] {
        let newest = try client.find(
          Query(
            className: className,
            equalTo: ["user": .pointer(className: User.className, objectId: user.objectId)],
            order: ["-createDate"], limit: 1)
        ).first
        latest = max(latest, newest?.createDate ?? 0)
      }
      let isYou = user.objectId == me.objectId
      return Member(
        user: user, lastActive: latest,
        isModerator: isYou ? isModerator : moderators.map { $0.contains(user.objectId) },
        isYou: isYou)
    }.sorted { ($0.lastActive, $1.user.userName) > ($1.lastActive, $0.user.userName) }
  }

  /// `@handle` in any case, or `@Name` when exactly one person is called Name (any case);
  /// nil when no one or several are.
  func user(looselyNamed name: String) throws -> User? {
    let users = try client.find(Query(className: User.className, order: ["userName"], limit: 1000))
      .map(User.init(object:))
    let folded = name.lowercased()
    let byHandle = users.filter { $0.userName.lowercased() == folded }
    if byHandle.count == 1 { return byHandle[0] }
    let byName = users.filter { $0.displayName.lowercased() == folded }
    return byName.count == 1 ? byName[0] : nil
  }
}
