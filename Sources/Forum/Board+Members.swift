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
    var everyone = Query(className: User.className, order: ["userName"], limit: min(1000, limit))
    everyone.keys = User.shownFields
    let users = try client.find(everyone).map(User.init(object:))
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

  /// How many people the board has (`who` lists at most 1,000 of them).
  public func memberCount() throws -> Int {
    try client.count(Query(className: User.className))
  }

  /// `@handle` in any case, or `@Name` when exactly one person is called Name (exactly, or
  /// else in any case); nil when no one is. Several people of that name are `E404001` (no one
  /// person) naming their handles: a name is not an address, anyone may take one.
  func user(looselyNamed name: String) throws -> User? {
    var everyone = Query(className: User.className, order: ["userName"], limit: 1000)
    everyone.keys = User.shownFields
    let users = try client.find(everyone).map(User.init(object:))
    let folded = name.lowercased()
    let byHandle = users.filter { $0.userName.lowercased() == folded }
    if byHandle.count == 1 { return byHandle[0] }
    var exactly = Query(
      className: User.className, equalTo: ["displayName": .string(name)], order: ["userName"],
      limit: 5)
    exactly.keys = User.shownFields
    let named = try client.find(exactly).map(User.init(object:))
    if named.count == 1 { return named[0] }
    if named.count > 1 { throw try ambiguous(named, count: client.count(exactly)) }
    let byName = users.filter { $0.displayName.lowercased() == folded }
    if byName.count > 1 { throw ambiguous(Array(byName.prefix(5)), count: byName.count) }
    return byName.first
  }

  private func ambiguous(_ users: [User], count: Int) -> DatastoreError {
    DatastoreError(
      .notFound,
      reason: BoardReason.ambiguousName(
        handles: users.map(\.userName).filter(Board.isHandle), count: count))
  }
}
