/// What an engine keeps for readers beside the objects: each user's read position per parent,
/// the revisions of edited objects, moderation and the board's roles. Every operation acts as the
/// caller; a server engine takes the caller from its connection.
public protocol ReadingEngine: AnyObject {
  /// Sets the caller's read position in the parent `objectId` to `number` unless it is already
  /// higher. The parent must be readable (`E404001`).
  func markRead(_ parentClass: String, objectId: String, upTo number: Int64, as caller: Principals)
    throws

  /// Moves the caller's read position in the parent from `number - 1` to `number` (the caller
  /// posted child `number` right after all they had read); any other position stays.
  func advanceRead(
    _ parentClass: String, objectId: String, to number: Int64, as caller: Principals
  ) throws

  /// Every readable parent of `parentClass` read up to its last child.
  func markAllRead(_ parentClass: String, as caller: Principals) throws

  /// The caller's read position and unread children for each readable parent among `objectIds`,
  /// each count stopping at `limit` (1 asks only whether there is any).
  func unread(
    _ parentClass: String, objectIds: [String], countUpTo limit: Int, as caller: Principals
  )
    throws -> [String: UnreadState]

  /// Up to `limit` of the kept revisions of an object the caller can read, oldest first, after
  /// `skip` (`E404001` when the object is missing or unreadable).
  func revisions(
    _ className: String, objectId: String, skip: Int, limit: Int, as caller: Principals
  ) throws -> RevisionPage

  /// Takes down a public object under the class's `ModerationRule`: `E403001` unless the caller
  /// is in its role; `E404001` when missing, not public or already taken down.
  func moderate(_ className: String, objectId: String, as caller: Principals) throws

  /// Sets (`on`) or clears a flag under its `FlagRule`, dating the object: `E403001` unless the
  /// caller is in the rule's role or owns the board; `E404001` when the object is missing or not
  /// public. Setting a set flag or clearing a clear one changes nothing.
  func setFlag(
    _ rule: FlagRule, objectId: String, on: Bool, as caller: Principals
  ) throws

  /// The principals of `caller`'s user as they are now (roles granted or revoked since sign-in).
  func currentPrincipals(of caller: Principals) throws -> Principals

  /// True when the caller owns the board (SQLite: its first user; PostgreSQL: the schema's
  /// owner or a member of `forum_owner`).
  func isBoardOwner(_ caller: Principals) throws -> Bool

  /// Grants or revokes `role` to a user: the board's owner, or for the banned role its
  /// stewards (`StewardRule`), else `E403001`. Nobody bans the owner.
  func setRole(_ role: String, userId: String, member: Bool, as caller: Principals) throws

  /// The users in `role`: the board's owner, or for the banned role its stewards (`E403001`).
  func members(ofRole role: String, as caller: Principals) throws -> [String]

  /// A board setting a `StewardRule` declares, as stored (nil: not set); every member reads it.
  func setting(_ name: String, as caller: Principals) throws -> String?

  /// Sets (or with nil clears) a declared setting: the owner and the stewards (`E403001`).
  func setSetting(_ name: String, value: String?, as caller: Principals) throws
}

extension ReadingEngine {
  public func advanceRead(
    _ parentClass: String, objectId: String, to number: Int64, as caller: Principals
  ) throws {
    let state = try unread(parentClass, objectIds: [objectId], countUpTo: 1, as: caller)
    if state[objectId]?.position == number - 1 {
      try markRead(parentClass, objectId: objectId, upTo: number, as: caller)
    }
  }
}

/// Where a caller stands in one parent.
public struct UnreadState: Equatable, Sendable {
  /// The highest child number read; nil when the parent was never opened.
  public let position: Int64?
  /// Children numbered above the position that are not the caller's own, counted up to
  /// `countLimit` (a listing needs "many", not a walk of a 10,000-comment thread).
  public let unreadChildren: Int

  public static let countLimit = 1000

  public init(position: Int64?, unreadChildren: Int) {
    self.position = position
    self.unreadChildren = unreadChildren
  }
}

/// An earlier state of an edited object: the revisioned fields as they were, and since when.
public struct Revision: Equatable, Sendable {
  /// How many revisions of one object are kept: the first and the latest `kept - 1`. The
  /// engine drops the others as it writes a new one (a member with psql editing a post 10,000
  /// times must not fill the disk or a history page).
  public static let kept = 100

  /// 1 for the original text, 2 for the first edit, … (numbers of dropped revisions are gaps).
  public let number: Int
  /// When this text was written (the object's createDate or an edit's date), milliseconds.
  public let date: Int64
  public let fields: [String: JSONValue]

  public init(number: Int, date: Int64, fields: [String: JSONValue]) {
    self.number = number
    self.date = date
    self.fields = fields
  }
}

/// One page of an object's kept revisions.
public struct RevisionPage: Equatable, Sendable {
  public let revisions: [Revision]
  /// How many are kept in all (at most `Revision.kept`).
  public let count: Int
  /// The number of the latest kept revision; 0 when there is none.
  public let lastNumber: Int

  public init(revisions: [Revision], count: Int, lastNumber: Int) {
    self.revisions = revisions
    self.count = count
    self.lastNumber = lastNumber
  }
}
