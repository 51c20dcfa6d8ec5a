import Datastore

/// What a delete did: the author's own delete removes the post; a moderator's delete of someone
/// else's public post leaves a tombstone ("deleted by a moderator", with the time).
public enum Deletion: Equatable, Sendable {
  case deleted
  case takenDown
}

/// Moderation: the board's owner grants and revokes `role:moderator`; moderators take down
/// others' public posts. The engine checks both (on PostgreSQL the server does).
extension Board {
  /// True while you hold `role:moderator` (read again at every command, see `refresh`).
  public var isModerator: Bool {
    client.principals.names.contains("role:" + Board.moderatorRole)
  }

  /// True when you own the board (SQLite: its first user; PostgreSQL: the schema's owner or a
  /// member of `forum_owner`).
  public func isOwner() throws -> Bool { try client.isBoardOwner }

  /// Has the server confirm who you are (your roles, your user), when the session was resumed
  /// from what the profile kept of it and nothing has been asked yet (https boards).
  public func confirmYou() throws { try client.confirmSession() }

  /// Reads your roles again: a role granted or revoked since you started counts from now on.
  public func refresh() throws {
    try client.refreshPrincipals()
  }

  /// Grants (`true`) or revokes `role:moderator`: the board's owner only (`E403001`).
  @discardableResult
  public func setModerator(handle: String, _ moderator: Bool) throws -> User {
    guard try isOwner() else {
      throw DatastoreError(.noAccess, reason: BoardReason.onlyOwnerChoosesModerators)
    }
    let user = try user(handle: handle)
    try client.setRole(Board.moderatorRole, userId: user.objectId, member: moderator)
    return user
  }

  /// True while you are banned (read again at every command, see `refresh`): you read, and
  /// the engine refuses your writes.
  public var isBanned: Bool {
    client.principals.names.contains("role:" + Board.bannedRole)
  }

  /// Bans (`true`) or allows again a member: moderators and the owner; nobody bans the owner,
  /// and you do not ban yourself (`E403001`). The member's posts stay.
  @discardableResult
  public func setBanned(handle: String, _ banned: Bool) throws -> User {
    let user = try user(handle: handle)
    try setBanned(userId: user.objectId, banned)
    return user
  }

  /// Bans or allows again the user `userId` (see `setBanned(handle:_:)`).
  public func setBanned(userId: String, _ banned: Bool) throws {
    guard userId != myId || !banned else {
      throw DatastoreError(.noAccess, reason: BoardReason.cannotBanYourself)
    }
    try Board.saying(.onlyModeratorsBan) {
      try client.setRole(Board.bannedRole, userId: userId, member: banned)
    }
  }

  /// The engine's refusal of a steward's write said as the board's rule `reason`; a banned
  /// steward's own ban shows through.
  private static func saying(_ reason: BoardReason, _ write: () throws -> Void) throws {
    do {
      try write()
    } catch let error as DatastoreError
      where error.code == .noAccess && error.reason != .store(.banned)
    {
      throw DatastoreError(.noAccess, reason: reason)
    }
  }

  /// The banned members: moderators and the owner (`E403001`).
  public func bannedMembers() throws -> [String] {
    try client.members(ofRole: Board.bannedRole)
  }

  /// The board's posting budget (posts a member may make in any minute), nil when not set.
  public func postsPerMinute() throws -> Int? {
    try client.setting(Board.postsPerMinuteSetting).flatMap { Int($0) }
  }

  /// Sets (nil: clears) the posting budget: moderators and the owner (`E403001`).
  public func setPostsPerMinute(_ count: Int?) throws {
    if let count, count < 0 || count > 100_000 {
      throw DatastoreError(.invalid, field: "postsPerMinute")
    }
    try Board.saying(.onlyModeratorsSetPostingBudget) {
      try client.setSetting(Board.postsPerMinuteSetting, value: count.map { String($0) })
    }
  }

  /// The board's bound on the bytes one member's objects and files hold (nil: none set; then
  /// `forum serve --storage-per-user` alone bounds app users, and on SQLite nothing else).
  public func memberStorageBytes() throws -> Int? {
    try client.memberStorageBytes()
  }

  /// Sets (nil: clears) the storage bound per member: the board's owner only (`E403001`).
  /// On PostgreSQL the database holds members' own writes to it at once; a running `forum
  /// serve` holds its app users to it (or its own `--storage-per-user`, the smaller) from
  /// their next write.
  public func setMemberStorageBytes(_ bytes: Int?) throws {
    try Board.saying(.onlyOwnerSetsMemberStorage) { try client.setMemberStorageBytes(bytes) }
  }

  /// The moderators: the board's owner only (`E403001`).
  public func moderators() throws -> [User] {
    guard try isOwner() else {
      throw DatastoreError(.noAccess, reason: BoardReason.onlyOwnerListsModerators)
    }
    return try client.members(ofRole: Board.moderatorRole).compactMap {
      try? User(object: client.get(User.className, objectId: $0))
    }
  }
}
