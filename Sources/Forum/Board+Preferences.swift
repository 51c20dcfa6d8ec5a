import Datastore

/// What each person keeps for themselves on the board: threads muted or followed, and when they
/// last left the prompt (the start of "what happened since I was last here"). Objects of the
/// class `Preference`, one per mark, readable and writable by their owner alone (the engine sets
/// `user` to the caller, so nobody can mark threads for someone else); a mark is made by a
/// create and unmade by a delete, so two prompts of one person never undo each other's marks.
extension Board {
  static let preferenceClass = "Preference"
  public static let preferenceClassName = preferenceClass

  /// What a person does with a thread.
  public enum ThreadMark: String, Sendable, CaseIterable {
    /// Hidden from `list`, `unread`, the summary and notices.
    case mute
    /// Its new comments are told wherever the person is.
    case follow
  }

  /// The signed-in person's marks: thread numbers muted and followed.
  public struct Marks: Sendable, Equatable {
    public var muted: Set<Int> = []
    public var followed: Set<Int> = []
    /// When they last left the prompt (milliseconds), nil before the first time.
    public var lastLeft: Int64?

    public init() {}
  }

  /// Reads the signed-in person's marks (their own objects only: the ACL lets nobody else's in,
  /// and the owner check keeps out an object someone made readable to them).
  public func marks() throws -> Marks {
    guard let me = client.userId else { return Marks() }
    var marks = Marks()
    for object in try preferenceObjects() where object["user"]?.pointerId == me {
      let kind = object["kind"]?.stringValue
      if kind == "visit" {
        marks.lastLeft = max(marks.lastLeft ?? 0, object["lastLeft"]?.intValue ?? 0)
      } else if let number = object["thread"]?.intValue.map(Int.init) {
        switch ThreadMark(rawValue: kind ?? "") {
        case .mute: marks.muted.insert(number)
        case .follow: marks.followed.insert(number)
        case nil: break
        }
      }
    }
    return marks
  }

  private func preferenceObjects() throws -> [DataObject] {
    guard let me = client.userId else { return [] }
    return try client.find(
      Query(
        className: Board.preferenceClass,
        equalTo: ["user": .pointer(className: User.className, objectId: me)],
        order: ["createDate"], limit: Query.maximumLimit))
  }

  /// Marks thread `number` (it must exist and be readable); marking it again changes nothing.
  /// Muting a followed thread stops following it, and the other way round. Returns false when
  /// it was already so.
  @discardableResult
  public func mark(_ number: Int, _ mark: ThreadMark) throws -> Bool {
    let userId = try signedInUser()
    try Board.checkNumber(number, .thread)
    let outcome = try perform(BoardWrites.mark(number, mark, owner: userId)) { step, error in
      step == 0 && error.code == .notFound
        ? DatastoreError(.notFound, reason: BoardReason.noThread(number)) : error
    }
    return outcome.stoppedAt == nil
  }

  /// Takes the mark off thread `number`; false when it had none.
  @discardableResult
  public func unmark(_ number: Int, _ mark: ThreadMark) throws -> Bool {
    _ = try signedInUser()
    let outcome = try perform(BoardWrites.unmark(number, mark)) { _, error in error }
    return !outcome.objects(0).isEmpty
  }

  /// Records that the person leaves now (or has caught up with everything: `read --all`), by
  /// the engine's clock.
  public func recordLeaving() throws {
    let userId = try signedInUser()
    _ = try perform(BoardWrites.leaving(owner: userId)) { _, error in error }
  }
}

extension Board {
  /// `page` without the threads in `muted`, and how many it left out.
  public static func hiding(_ muted: Set<Int>, from page: Page<ForumThread>) -> (
    page: Page<ForumThread>, hidden: Int
  ) {
    guard !muted.isEmpty else { return (page, 0) }
    let kept = page.items.filter { !muted.contains($0.number) }
    return (
      Page(items: kept, number: page.number, hasMore: page.hasMore), page.items.count - kept.count
    )
  }
}

extension Board {
  /// Among the comments with these ids (new ones, from the change feed), those by others in the
  /// threads numbered `threads`, oldest first, each with its thread.
  public func comments(objectIds: [String], inThreads numbers: Set<Int>) throws -> [(
    comment: ForumComment, thread: ForumThread
  )] {
    guard !objectIds.isEmpty, !numbers.isEmpty else { return [] }
    let objects = try client.get(
      Board.commentClass, objectIds: objectIds, include: ["user"], includeKeys: User.shownFields
    )
    .filter { $0["user"]?.pointerId != myId }
    guard !objects.isEmpty else { return [] }
    let threadIds = Array(Set(objects.compactMap { $0["thread"]?.pointerId }))
    let threads = Dictionary(
      try threads(objectIds: threadIds).filter { numbers.contains($0.number) }.map {
        ($0.objectId, $0)
      },
      uniquingKeysWith: { first, _ in first })
    var found: [(comment: ForumComment, thread: ForumThread)] = []
    for object in objects {
      guard let id = object["thread"]?.pointerId, let thread = threads[id] else { continue }
      found.append(
        (ForumComment(object, threadNumber: thread.number, viewer: myId), thread))
    }
    return found.sorted {
      ($0.comment.createDate, $0.comment.number) < ($1.comment.createDate, $1.comment.number)
    }
  }
}
