import Datastore

/// Editing: only the author may change a post (the datastore's ACL says so), and the engine
/// keeps every earlier revision, readable by exactly who can read the post.
extension Board {
  /// Changes a thread's title and/or description. Someone else's thread is `E403001`; a missing
  /// or taken-down one `E404001`.
  @discardableResult
  public func editThread(_ number: Int, title: String?, description: String?) throws
    -> ForumThread
  {
    var fields: [String: JSONValue] = [:]
    if let title { fields["title"] = .string(try PostRules.title(title)) }
    if let description { fields["description"] = .string(try PostRules.description(description)) }
    guard !fields.isEmpty else { throw DatastoreError(.empty, field: "title") }
    try Board.checkNumber(number, .thread)
    // An edit is written and kept as a revision as a post is: it counts against the same budget.
    try beforePost?()
    let write = BoardWrites.editThread(number, fields: fields)
    let label = "#\(number)"
    let outcome = try perform(write) { step, error in
      try postRefusal(
        step, error, postStep: 1, label: label, threadNumber: number,
        onlyAuthor: BoardReason.onlyAuthorMayEdit, author: { try self.threadObject(number) })
    }
    guard var updated = outcome.object(2) else { throw missingOutcome }
    updated.included["user"] = me.object
    return try withUnread([ForumThread(updated, viewer: myId)])[0]
  }

  /// Changes a comment's text.
  @discardableResult
  public func editComment(_ number: Int, inThread threadNumber: Int, text: String) throws
    -> ForumComment
  {
    let text = try PostRules.comment(text)
    if number <= 0 {
      _ = try threadObject(threadNumber, withAuthor: false)
      try Board.checkNumber(number, .comment)
    }
    try Board.checkNumber(threadNumber, .thread)
    try beforePost?()
    let write = BoardWrites.editComment(number, inThread: threadNumber, text: text)
    let label = "\(threadNumber)/\(number)"
    let outcome = try perform(write) { step, error in
      try postRefusal(
        step, error, postStep: 2, label: label, threadNumber: threadNumber, commentNumber: number,
        onlyAuthor: BoardReason.onlyAuthorMayEdit,
        author: { try self.commentObject(number, of: try self.threadObject(threadNumber)) })
    }
    guard var updated = outcome.object(3) else { throw missingOutcome }
    updated.included["user"] = me.object
    return ForumComment(updated, threadNumber: threadNumber, viewer: myId)
  }

  /// The earlier texts of a thread (title and description) or comment that are kept, oldest
  /// first, then the current one; each with the time it was written; `pageSize` a page. Only
  /// the first and the latest revisions are kept (`Revision.kept`): the numbers skip the rest.
  /// `pages` is how many pages there are; a page past them is empty.
  public func history(of thread: Int, comment: Int?, page: Int = 1) throws -> (
    page: Page<Revision>, pages: Int
  ) {
    let skip = try Board.offset(page: page)
    let threadObject = try threadObject(thread)
    let object = try comment.map { try commentObject($0, of: threadObject) } ?? threadObject
    guard object["moderatedDate"] == nil else {
      throw DatastoreError(
        .notFound, reason: BoardReason.takenDown(label: label(thread, comment)))
    }
    let className = comment == nil ? Board.threadClass : Board.commentClass
    let earlier = try client.revisions(
      className, objectId: object.objectId, skip: skip, limit: Board.pageSize)
    let fields = comment == nil ? ["title", "description"] : ["text"]
    var current: [String: JSONValue] = [:]
    for field in fields { current[field] = object.isDamaged ? nil : object[field] }
    let total = earlier.count + 1
    var items = earlier.revisions
    if skip + Board.pageSize > earlier.count && skip <= earlier.count {
      items.append(
        Revision(
          number: earlier.lastNumber + 1,
          date: object["editDate"]?.intValue ?? object.createDate, fields: current))
    }
    let pages = (total - 1) / Board.pageSize + 1
    return (Page(items: items, number: page, hasMore: skip + Board.pageSize < total), pages)
  }

  static func authorName(_ object: DataObject) -> String {
    object.included["user"].map(User.init(object:))?.displayName ?? "(deleted user)"
  }

  func label(_ thread: Int, _ comment: Int?) -> String {
    comment.map { "\(thread)/\($0)" } ?? "#\(thread)"
  }
}
