import Datastore

/// Direct messages (seed 002): a private conversation per pair of users, its messages, and the
/// inbox. The engine keeps them private (`PairRule`: readers are exactly the two, nobody writes
/// the conversation; `ChildRule`: every message has its conversation's readers), so nothing here
/// filters by hand: a third person's queries simply find nothing.
extension Board {
  static let conversationClass = "Conversation"
  static let messageClass = "Message"

  /// One conversation per pair; `user` is who started it, `partner` the other member.
  static let conversationPair = PairRule(
    className: conversationClass, ownerField: "user", partnerField: "partner", pairField: "pair")

  /// Messages are numbered, counted and dated by their conversation, and readable exactly by it.
  static let conversationMessages = ChildRule(
    childClass: messageClass, parentField: "conversation", parentClass: conversationClass,
    numberField: "number", lastNumberField: "lastMessageNumber", countField: "messageCount",
    activityField: "lastActivity", fileField: nil)

  /// The inbox walks a member's conversations by activity, one index per side; handles are
  /// looked up by their unique userName.
  static let conversationIndexes = [
    IndexSpec(className: conversationClass, fields: ["user", "lastActivity"]),
    IndexSpec(className: conversationClass, fields: ["partner", "lastActivity"]),
    IndexSpec(className: messageClass, fields: ["conversation", "number"]),
    IndexSpec(className: User.className, fields: ["userName"]),
  ]

  // MARK: Handles

  /// The user whose handle is `handle` (`@bob` or `bob`), or whom it names loosely (the handle
  /// in another case, or a unique display name); `E404001` when there is none, or when several
  /// people are called it (saying so).
  public func user(handle: String) throws -> User {
    let name = handle.hasPrefix("@") ? String(handle.dropFirst()) : handle
    let exact =
      Board.isHandle(name)
      ? try client.find(
        Query(className: User.className, equalTo: ["userName": .string(name)], limit: 1)
      ).first : nil
    if exact == nil, !name.isEmpty, name.count <= User.maximumDisplayNameLength {
      switch try user(looselyNamed: name) {
      case .one(let user):
        return user  // `@ken` for @Ken1234567's handle in another case, or `@Ken`, the only Ken
      case .several(let users, let count):
        throw DatastoreError(
          .notFound,
          reason: BoardReason.severalNamed(
            name: name, handles: users.map(\.userName).filter(Board.isHandle), count: count))
      case .nobody: break
      }
    }
    guard let object = exact else {
      // Only a well-formed handle is repeated back: anything else may carry escapes.
      throw DatastoreError(
        .notFound,
        reason: Board.isHandle(name) ? BoardReason.noUser(handle: name) : BoardReason.noSuchUser)
    }
    return User(object: object)
  }

  /// Users whose handle starts with `prefix` (for completion), at most `limit`: the people of
  /// your recent conversations first, then the board's users in handle order. A board of more
  /// than `scanLimit` users offers only the first `scanLimit` handles besides your partners (the
  /// datastore has no string range queries).
  public func users(handlePrefix prefix: String, limit: Int = 50, scanLimit: Int = 1000) throws
    -> [User]
  {
    let name = prefix.hasPrefix("@") ? String(prefix.dropFirst()) : prefix
    guard name.isEmpty || Board.isHandle(name) else { return [] }
    let partners = try conversationPage(skip: 0).items.map(\.partner)
    var all = Query(className: User.className, order: ["userName"], limit: min(1000, scanLimit))
    all.keys = User.shownFields
    let everyone = scanLimit < 1 ? [] : try client.find(all).map(User.init(object:))
    var seen: Set<String> = []
    return (partners + everyone)
      .filter {
        $0.userName.hasPrefix(name) && Board.isHandle($0.userName)
          && seen.insert($0.objectId).inserted
      }
      .prefix(limit).map { $0 }
  }

  /// Handles are letters and digits (the engine makes them 10 long); anything else is no one.
  static func isHandle(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 64
      && name.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 122) }
  }

  // MARK: Reading

  /// The signed-in person's conversations, most recent message first, `pageSize` a page, each
  /// with its newest message.
  public func conversations(page: Int) throws -> Page<ForumConversation> {
    var conversations = try conversationPage(skip: try Board.offset(page: page))
    var items = conversations.items
    for index in items.indices {
      items[index].lastMessage = try lastMessage(of: items[index])
    }
    // Unread: the partner's messages after your read position in each conversation.
    let states = try client.unread(Board.conversationClass, objectIds: items.map(\.objectId))
    for index in items.indices {
      items[index].unread = states[items[index].objectId]?.unreadChildren ?? 0
    }
    conversations = Page(items: items, number: page, hasMore: conversations.hasMore)
    return conversations
  }

  /// A page of conversations after `skip`, without their last messages.
  private func conversationPage(skip: Int) throws -> Page<ForumConversation> {
    let me = try signedInUserId()
    // Two ordered index walks (started by me, started by the partner), merged: neither looks at
    // anyone else's conversations, however many there are.
    var merged: [DataObject] = []
    for side in ["user", "partner"] {
      merged += try client.find(
        Query(
          className: Board.conversationClass,
          equalTo: [side: .pointer(className: User.className, objectId: me)],
          order: ["-lastActivity"], limit: skip + Board.pageSize + 1,
          include: ["user", "partner"], includeKeys: User.shownFields))
    }
    merged.sort {
      let (left, right) = ($0["lastActivity"]?.intValue ?? 0, $1["lastActivity"]?.intValue ?? 0)
      return left != right ? left > right : $0.objectId > $1.objectId
    }
    let items = merged.dropFirst(skip).prefix(Board.pageSize).map {
      ForumConversation($0, viewer: me)
    }
    return Page(
      items: Array(items), number: skip / Board.pageSize + 1,
      hasMore: merged.count > skip + Board.pageSize)
  }

  /// The conversation with `handle`; `E404001` when there is none (yet) or no such user.
  public func conversation(with handle: String) throws -> ForumConversation {
    let partner = try user(handle: handle)
    guard let object = try conversationObject(with: partner) else {
      throw DatastoreError(
        .notFound, reason: BoardReason.noConversation(handle: partner.userName))
    }
    return ForumConversation(object, viewer: try signedInUserId())
  }

  /// A conversation's messages, oldest first, `pageSize` a page.
  public func messages(in conversation: ForumConversation, page: Int) throws -> Page<
    ForumMessage
  > {
    let skip = try Board.offset(page: page)
    var query = Query(
      className: Board.messageClass,
      equalTo: [
        "conversation": .pointer(
          className: Board.conversationClass, objectId: conversation.objectId)
      ], order: ["number"], limit: Board.pageSize + 1, skip: skip, include: ["user"],
      includeKeys: User.shownFields)
    // Without deletions the page starts by seeking the (conversation, number) index.
    if conversation.lastMessageNumber == conversation.messageCount {
      query.skip = 0
      query.greaterThan = ["number": Int64(skip)]
    }
    let objects = try client.find(query)
    return Page(
      items: objects.prefix(Board.pageSize).map { ForumMessage($0, viewer: myId) },
      number: page, hasMore: objects.count > Board.pageSize)
  }

  /// The last page of a conversation's messages, as `lastPage(of:)` gives a thread's.
  public func lastPage(of conversation: ForumConversation) throws -> Int {
    let kept = Board.lastPage(commentCount: conversation.messageCount)
    guard conversation.messageCount > conversation.lastMessageNumber || kept > Board.maximumPage
    else { return kept }
    let counted = try client.count(
      Query(
        className: Board.messageClass,
        equalTo: [
          "conversation": .pointer(
            className: Board.conversationClass, objectId: conversation.objectId)
        ]))
    return Board.lastPage(commentCount: counted)
  }

  /// The newest message of a conversation, if it has any.
  public func lastMessage(of conversation: ForumConversation) throws -> ForumMessage? {
    guard conversation.messageCount > 0 else { return nil }
    return try client.find(
      Query(
        className: Board.messageClass,
        equalTo: [
          "conversation": .pointer(
            className: Board.conversationClass, objectId: conversation.objectId)
        ], order: ["-number"], limit: 1, include: ["user"], includeKeys: User.shownFields)
    ).first.map { ForumMessage($0, viewer: myId) }
  }

  // MARK: Writing

  /// Sends `text` to `handle`, starting the conversation if there is none. Yourself is
  /// `E400002` (a conversation has two members); an unknown handle `E404001`.
  @discardableResult
  public func sendMessage(to handle: String, text: String) throws -> ForumMessage {
    let text = try PostRules.message(text)
    let partner = try user(handle: handle)
    try beforePost?()
    let conversation = try conversationObject(startingWith: partner)
    var created = try client.create(
      Board.messageClass,
      fields: [
        "text": .string(text),
        "conversation": .pointer(
          className: Board.conversationClass, objectId: conversation.objectId),
      ],
      acl: ACL(readers: [myId, partner.objectId], writers: [myId]))
    created.included["user"] = me.object
    return ForumMessage(created, viewer: myId)
  }

  /// Checks a message to `handle` could be sent (the user exists and is not you), before a draft
  /// is typed. Returns the partner.
  public func checkRecipient(_ handle: String) throws -> User {
    let partner = try user(handle: handle)
    guard partner.objectId != myId else { throw Board.selfConversation }
    return partner
  }

  static let selfConversation = DatastoreError(
    .invalid, field: "partner", reason: BoardReason.conversationNeedsSomeoneElse)

  // MARK: Helpers

  private func signedInUserId() throws -> String {
    guard let userId = client.userId else { throw DatastoreError(.authentication) }
    return userId
  }

  private func conversationObject(with partner: User) throws -> DataObject? {
    let me = try signedInUserId()
    return try client.find(
      Query(
        className: Board.conversationClass,
        equalTo: ["pair": .string(PairRule.pairKey(me, partner.objectId))], limit: 1,
        include: ["user", "partner"], includeKeys: User.shownFields)
    ).first
  }

  /// The pair's conversation, created when there is none. Two people starting it at once get one
  /// conversation: the engine refuses the second, which then reads the first.
  private func conversationObject(startingWith partner: User) throws -> DataObject {
    guard partner.objectId != myId else { throw Board.selfConversation }
    if let existing = try conversationObject(with: partner) { return existing }
    do {
      return try client.create(
        Board.conversationClass,
        fields: ["partner": .pointer(className: User.className, objectId: partner.objectId)],
        acl: ACL(readers: [myId, partner.objectId]))
    } catch let refusal as DatastoreError where refusal.code == .invalid {
      guard let existing = try conversationObject(with: partner) else { throw refusal }
      return existing
    }
  }
}
