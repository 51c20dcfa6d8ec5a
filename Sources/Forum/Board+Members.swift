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
      let isYou = user.objectId == myId
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

  /// Whom a loosely written name reaches: `@handle` in any case, or `@Name` when exactly one
  /// person is called Name (exactly, or else in any case).
  enum LooseMatch {
    case one(User)
    case nobody
    /// Several people are called this, and it is nobody's handle: the first few, and how many.
    case several([User], count: Int)
  }

  /// `@handle` in any case, or `@Name` when exactly one person is called Name (exactly, or else
  /// in any case); `dm`, `mod`, `search --author` and mentions all resolve names this way. A
  /// name is not an address (anyone may take one): several people of that name reach nobody.
  func user(looselyNamed name: String) throws -> LooseMatch {
    let users = try usersToMatch()
    let folded = name.lowercased()
    let byHandle = users.filter { $0.userName.lowercased() == folded }
    if byHandle.count == 1 { return .one(byHandle[0]) }
    let byName = users.filter { $0.displayName.lowercased() == folded }
    // Exact display names are asked of the datastore too, so a name past the first 1,000
    // people (by handle) is still found, and still found ambiguous.
    var exactly = Query(
      className: User.className, equalTo: ["displayName": .string(name)], order: ["userName"],
      limit: 5)
    exactly.keys = User.shownFields
    let named = try client.find(exactly).map(User.init(object:))
    let namedCount = named.count > 1 ? try client.count(exactly) : named.count
    if byName.count > 1 || namedCount > 1 {
      return namedCount >= byName.count
        ? .several(named, count: namedCount)
        : .several(Array(byName.prefix(5)), count: byName.count)
    }
    if let one = byName.first ?? named.first { return .one(one) }
    return .nobody
  }

  /// The users a loose name is looked for among (the datastore has no case-folded queries):
  /// their handles and names only, whatever else their objects hold.
  func usersToMatch() throws -> [User] {
    var everyone = Query(className: User.className, order: ["userName"], limit: 1000)
    everyone.keys = User.shownFields
    return try client.find(everyone).map(User.init(object:))
  }

  static func match(_ name: String, among users: [User]) -> LooseMatch {
    let folded = name.lowercased()
    let byHandle = users.filter { $0.userName.lowercased() == folded }
    if byHandle.count == 1 { return .one(byHandle[0]) }
    let byName = users.filter { $0.displayName.lowercased() == folded }
    switch byName.count {
    case 0: return .nobody
    case 1: return .one(byName[0])
    default: return .several(Array(byName.prefix(5)), count: byName.count)
    }
  }
}
