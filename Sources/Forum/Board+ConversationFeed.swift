import Datastore

/// What the live prompt needs of conversations: messages by id (from the change feed) and the
/// newest messages after a number (a room's arrivals).
extension Board {
  public static let messageClassName = messageClass

  /// The messages with these ids that still exist and the caller may read, oldest first.
  public func messages(objectIds: [String]) throws -> [ForumMessage] {
    try client.get(
      Board.messageClass, objectIds: objectIds, include: ["user"], includeKeys: User.shownFields
    )
    .map { ForumMessage($0, viewer: myId) }
    .sorted { ($0.createDate, $0.number) < ($1.createDate, $1.number) }
  }

  /// The newest messages of the conversation `conversationId` after message `after`, at most
  /// `limit` of them (oldest first), and how many there are after `after` in all.
  public func messages(inConversation conversationId: String, after: Int, limit: Int) throws -> (
    messages: [ForumMessage], total: Int
  ) {
    let pointer = JSONValue.pointer(className: Board.conversationClass, objectId: conversationId)
    var query = Query(
      className: Board.messageClass, equalTo: ["conversation": pointer], order: ["-number"],
      limit: limit, include: ["user"], includeKeys: User.shownFields)
    query.greaterThan = ["number": Int64(after)]
    let newest = try client.find(query).reversed().map { ForumMessage($0, viewer: myId) }
    guard newest.count >= limit else { return (newest, newest.count) }
    var counting = Query(className: Board.messageClass, equalTo: ["conversation": pointer])
    counting.greaterThan = ["number": Int64(after)]
    return (newest, try client.count(counting))
  }
}
