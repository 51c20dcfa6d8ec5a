/// Read positions, revisions, moderation and roles, as the signed-in caller.
extension DatastoreClient {
  private var readingEngine: any DatastoreEngine { store.engine }

  private func requireUser() throws {
    guard userId != nil, !caller.isMaster else { throw DatastoreError(.authentication) }
  }

  private func checkParent(_ parentClass: String) throws {
    try DatastoreClient.validate(className: parentClass)
    guard !store.rules.parentRules(of: parentClass).isEmpty else {
      throw DatastoreError.invalid("className", "\(parentClass) has no children")
    }
  }

  /// Your read position in a parent moves up to `number` (never back).
  public func markRead(_ parentClass: String, objectId: String, upTo number: Int64) throws {
    try requireUser()
    try checkParent(parentClass)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    guard number >= 0 else { throw DatastoreError.invalid("position") }
    try readingEngine.markRead(parentClass, objectId: objectId, upTo: number, as: caller)
  }

  /// Your read position in a parent moves from `number - 1` to `number` (you posted child
  /// `number` right after all you had read); any other position stays.
  public func advanceRead(_ parentClass: String, objectId: String, to number: Int64) throws {
    try requireUser()
    try checkParent(parentClass)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    guard number >= 1 else { return }
    try readingEngine.advanceRead(parentClass, objectId: objectId, to: number, as: caller)
  }

  /// Every parent of the class you can read, read to its last child.
  public func markAllRead(_ parentClass: String) throws {
    try requireUser()
    try checkParent(parentClass)
    try readingEngine.markAllRead(parentClass, as: caller)
  }

  /// Your read position and unread count in each of these parents (readable ones only). A count
  /// stops at `limit` (at most `UnreadState.countLimit`): counting walks the unread children.
  public func unread(
    _ parentClass: String, objectIds: [String], countUpTo limit: Int = UnreadState.countLimit
  ) throws -> [String: UnreadState] {
    try requireUser()
    try checkParent(parentClass)
    let ids = objectIds.filter(Validation.isObjectId)
    guard !ids.isEmpty else { return [:] }
    let limit = min(max(limit, 1), UnreadState.countLimit)
    return try readingEngine.unread(parentClass, objectIds: ids, countUpTo: limit, as: caller)
  }

  /// `find` (`findCounted` when `counted`) with your read position and unread count in each
  /// parent found, as `unread` gives them: over https one request instead of two. Without a
  /// user, no states. `statesOfFirst`: only the first so many need them (a page asked with one
  /// more, to know there are more), which an engine on this machine then counts alone.
  public func findWithUnread(
    _ query: Query, counted: Bool = false, countUpTo limit: Int = UnreadState.countLimit,
    statesOfFirst: Int = Query.maximumLimit
  ) throws -> FoundWithUnread {
    guard userId != nil, !caller.isMaster else {
      let (objects, count) = counted ? try findCounted(query) : (try find(query), nil)
      return FoundWithUnread(objects: objects, count: count, unread: [:])
    }
    try DatastoreClient.validate(query: query)
    try checkParent(query.className)
    let limit = min(max(limit, 1), UnreadState.countLimit)
    if var found = try engine.findWithUnread(
      query, counted: counted, countUpTo: limit, as: caller)
    {
      found.objects = try withIncludes(found.objects, of: query)
      return found
    }
    let (objects, count) = counted ? try findCounted(query) : (try find(query), nil)
    return FoundWithUnread(
      objects: objects, count: count,
      unread: try unread(
        query.className, objectIds: objects.prefix(statesOfFirst).map(\.objectId),
        countUpTo: limit))
  }

  /// The earlier revisions of an object you can read that are kept, oldest first: up to
  /// `limit` after `skip`, with how many there are.
  public func revisions(
    _ className: String, objectId: String, skip: Int = 0, limit: Int = Revision.kept
  ) throws -> RevisionPage {
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    guard skip >= 0 else { throw DatastoreError.invalid("skip") }
    guard (1...Revision.kept).contains(limit) else { throw DatastoreError.invalid("limit") }
    return try readingEngine.revisions(
      className, objectId: objectId, skip: skip, limit: limit, as: caller)
  }

  /// Takes down someone's public object, leaving a tombstone (`ModerationRule`).
  public func moderate(_ className: String, objectId: String) throws {
    try requireUser()
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    guard store.rules.moderationRule(of: className) != nil else { throw DatastoreError.noAccess }
    try readingEngine.moderate(className, objectId: objectId, as: caller)
  }

  /// Sets or clears the flag `field` of a public object (`FlagRule`: a moderator pins a
  /// thread): only the rule's role and the board's owner (`E403001`, `onlyRoleMaySet`).
  public func setFlag(_ className: String, objectId: String, field: String, on: Bool) throws {
    try requireUser()
    try DatastoreClient.validate(className: className)
    guard Validation.isObjectId(objectId) else { throw DatastoreError.invalid("objectId") }
    guard let rule = store.rules.flagRule(of: className, field: field) else {
      throw DatastoreError.invalid("field", field)
    }
    // The engine decides (on PostgreSQL the server); asking first gives the refusal its reason.
    let allowed = try principals.names.contains("role:" + rule.role) || isBoardOwner
    guard allowed else {
      throw DatastoreError(
        .noAccess, reason: StoreReason.onlyRoleMaySet(field: field, role: rule.role))
    }
    try readingEngine.setFlag(rule, objectId: objectId, on: on, as: caller)
  }

  /// Reads your roles again, so a role granted or revoked since sign-in counts from now on.
  public func refreshPrincipals() throws {
    guard userId != nil, !caller.isMaster else { return }
    caller = try readingEngine.currentPrincipals(of: caller)
  }

  /// True when you own the board.
  public var isBoardOwner: Bool {
    get throws {
      guard userId != nil else { return false }
      return try readingEngine.isBoardOwner(caller)
    }
  }

  /// Grants (`member: true`) or revokes a role: the board's owner only (`E403001`).
  public func setRole(_ role: String, userId target: String, member: Bool) throws {
    try requireUser()
    guard Validation.isRoleName(role) else { throw DatastoreError.invalid("role") }
    guard Validation.isObjectId(target) else { throw DatastoreError.invalid("userId") }
    try readingEngine.setRole(role, userId: target, member: member, as: caller)
  }

  /// A board setting (`StewardRule.settings`), nil when not set.
  public func setting(_ name: String) throws -> String? {
    guard Validation.isName(name) else { throw DatastoreError.invalid("setting") }
    return try readingEngine.setting(name, as: caller)
  }

  /// Sets or clears a board setting: the owner and the stewards (`E403001`).
  public func setSetting(_ name: String, value: String?) throws {
    try requireUser()
    guard Validation.isName(name) else { throw DatastoreError.invalid("setting") }
    if let value, value.utf8.count > 200 { throw DatastoreError.invalid("value") }
    try readingEngine.setSetting(name, value: value, as: caller)
  }

  /// The largest storage bound per member a board may set: 1 TiB.
  public static let memberStorageBytesLimit = 1 << 40

  /// The board's bound on the bytes one member's objects and files hold (nil: none set).
  public func memberStorageBytes() throws -> Int? {
    try readingEngine.memberStorageBytes(as: caller)
  }

  /// Sets the board's storage bound per member, 1 byte to 1 TiB (nil: none): the board's
  /// owner only (`E403001`).
  public func setMemberStorageBytes(_ bytes: Int?) throws {
    try requireUser()
    if let bytes, bytes < 1 || bytes > DatastoreClient.memberStorageBytesLimit {
      throw DatastoreError.invalid("memberStorageBytes")
    }
    try readingEngine.setMemberStorageBytes(bytes, as: caller)
  }

  /// The users holding a role: the board's owner only (`E403001`).
  public func members(ofRole role: String) throws -> [String] {
    try requireUser()
    guard Validation.isRoleName(role) else { throw DatastoreError.invalid("role") }
    return try readingEngine.members(ofRole: role, as: caller)
  }
}
