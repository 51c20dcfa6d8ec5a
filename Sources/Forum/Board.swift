import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The bulletin board as one signed-in person sees it. Never prints: every result is a value,
/// every failure a `DatastoreError`.
public final class Board {
  /// The datastore and the signed-in client: kept inside Forum so that every write goes through
  /// the board's methods (the engine enforces the rules either way).
  let store: Datastore
  var client: DatastoreClient
  /// You: on an https board as the server last said (a session resumed from the profile's
  /// kept answer is confirmed first), or as this command last changed you.
  public private(set) var me: User {
    get { changedHere ? signedIn : client.sessionUser ?? signedIn }
    set {
      signedIn = newValue
      changedHere = true
    }
  }
  /// Your user id: a session's user never changes (asks nothing, unlike `me`).
  public var myId: String { signedIn.objectId }
  private var signedIn: User
  private var changedHere = false
  public let profileName: String
  public let profilePath: String

  public static let pageSize = 20

  /// `ownChanges` when `tidy` last found nothing left to do.
  private var tidiedAt: Int64 = 0

  /// One bounded step of the index upkeep that no commit does (`Datastore.tidy`), once this
  /// board has written since it last found nothing to do: scripts run it between commands, the
  /// prompt while it waits and a one-shot before it exits (`idle`). True when more may be left.
  @discardableResult
  public func tidy(idle: Bool = false) -> Bool {
    guard store.ownChanges != tidiedAt else { return false }
    if store.tidy(idle: idle) { return true }
    // Between writes a short queue is left for later: only an idle step finds all done.
    if idle { tidiedAt = store.ownChanges }
    return false
  }

  static let threadClass = "Thread"
  static let commentClass = "Comment"
  static let threadSequence = "threadNumber"

  /// The board's bookkeeping, enforced by the engine (see `EngineRules`): threads are numbered from
  /// the `threadNumber` sequence and belong to their author; comments belong to their author and
  /// to a thread, which numbers them, counts them, takes its last activity from them, lends them
  /// its readers and takes them (and its image file) along when deleted.
  public static let rules = EngineRules(
    sequences: [SequenceRule(className: threadClass, field: "number", sequence: threadSequence)],
    owners: [
      OwnerRule(className: threadClass, field: "user"),
      OwnerRule(className: commentClass, field: "user"),
      OwnerRule(className: messageClass, field: "user"),
      OwnerRule(className: preferenceClass, field: "user"),
    ],
    children: [
      ChildRule(
        childClass: commentClass, parentField: "thread", parentClass: threadClass,
        numberField: "number", lastNumberField: "lastCommentNumber", countField: "commentCount",
        activityField: "lastActivity", fileField: "fileName"),
      conversationMessages,
    ],
    pairs: [conversationPair],
    revisions: [
      RevisionRule(
        className: threadClass, fields: ["title", "description"], editDateField: "editDate"),
      RevisionRule(className: commentClass, fields: ["text"], editDateField: "editDate"),
    ],
    moderation: [
      ModerationRule(
        className: threadClass, role: moderatorRole,
        contentFields: ["title", "description", "image", "fileName"], fileField: "fileName",
        markField: "moderatedDate"),
      ModerationRule(
        className: commentClass, role: moderatorRole, contentFields: ["text"],
        markField: "moderatedDate"),
    ],
    // Moderators' flags on threads (a pinned thread is listed first, the index below).
    flags: ThreadFlag.all.map(\.rule),
    // Moderators and the owner ban members (who then write nothing) and set the posting budget.
    stewards: [
      StewardRule(role: moderatorRole, bannedRole: bannedRole, settings: [postsPerMinuteSetting])
    ])

  /// When a moderator or the owner pinned a thread; absent when it is not pinned.
  static let pinField = "pinnedDate"

  /// The role whose members may take down others' public posts (granted by the board's owner).
  public static let moderatorRole = "moderator"

  /// The role of banned members: the engine refuses their every write; their posts stay.
  public static let bannedRole = "banned"

  /// The board's posting budget: posts a member may make in any minute (the ssh door holds each
  /// key to it). Set by the owner or a moderator; absent, the door's default.
  public static let postsPerMinuteSetting = "postsPerMinute"

  /// `forum init`: creates or migrates the schema at `location` with the board's rules and
  /// indexes (on PostgreSQL, run as the database owner). Returns the location without secrets.
  @discardableResult
  public static func initialize(location: String) throws -> String {
    try Datastore.initialize(location, rules: rules, indexes: indexes)
    return try Datastore.open(location, rules: rules, indexes: indexes).location
  }

  /// The indexes the board's listings walk, so that no listing scans the class.
  public static let indexes =
    [
      IndexSpec(className: threadClass, fields: ["lastActivity"]),
      IndexSpec(className: threadClass, fields: [pinField, "lastActivity"]),
      IndexSpec(className: threadClass, fields: ["number"]),
      IndexSpec(className: commentClass, fields: ["thread", "number"]),
      // An app's thread view (NCMB's demo): a thread's comments in creation order.
      IndexSpec(className: commentClass, fields: ["thread", "createDate"]),
    ] + conversationIndexes + textIndexes

  /// Opens the board at `location` (a path or a `postgresql://` URI) as the profile's user
  /// (created on first use).
  public init(
    location: String, profile: String, profiles: ProfileStore,
    fileSizeLimit: Int = Datastore.defaultFileSizeLimit
  ) throws {
    // An https board's keys as the profile kept them: no request before the command's own.
    let kept =
      EngineKind(location: location) == .remote
      ? (try? profiles.loadOrCreate(profile))?.remoteKeys(for: location) : nil
    store = try Datastore.open(
      location, rules: Board.rules, indexes: Board.indexes, fileSizeLimit: fileSizeLimit,
      keptKeys: kept)
    var madeNew = false
    (client, signedIn) = try store.signIn(profile: profile, in: profiles, madeNew: &madeNew)
    isNewIdentity = madeNew
    profileName = profile
    profilePath = profiles.path(of: profile)
  }

  /// True when opening the board made the profile a new user here (its first time on it).
  public let isNewIdentity: Bool

  /// Called before each thread, comment or message is posted, and each post is edited, once its
  /// text is checked: the ssh door counts a key's posts against its budget here (an edit is
  /// written and kept as a revision as a post is); an error stops the write.
  public var beforePost: (() throws -> Void)?

  /// Where the board is: a path or a URI.
  public var location: String { store.location }
  /// The board's random id, made with it and kept when its file moves (what a profile's secrets
  /// and unsent drafts are filed under).
  public var boardId: String { store.boardId }
  /// The largest image the store accepts, in bytes.
  public var fileSizeLimit: Int { store.fileSizeLimit }

  // MARK: Reading

  /// Threads by latest activity, pinned ones first, `pageSize` a page; page numbers start at 1. With `total` (a
  /// `threadCount` the caller has anyway), a page in the back half is read from the oldest end,
  /// so the last page costs what the first does instead of stepping over every thread before it.
  public func threads(page: Int, total: Int? = nil, countingPages: Bool = false) throws
    -> Page<ForumThread>
  {
    let skip = try Board.offset(page: page)
    var query = Query(
      className: Board.threadClass, order: ["-" + Board.pinField, "-lastActivity"],
      limit: Board.pageSize + 1, skip: skip, include: ["user"], includeKeys: User.shownFields)
    if let total, skip > total / 2, skip < total {
      query.order = [Board.pinField, "lastActivity"]
      query.skip = max(0, total - skip - Board.pageSize)
      query.limit = min(Board.pageSize, total - skip)
      return Page(
        items: try threadsWithUnread(query).threads.reversed(),
        number: page, hasMore: total - skip - Board.pageSize > 0)
    }
    // Counted with the page when there are more, for "page X/Y", and with the read positions:
    // one request over https.
    let counting = total == nil && countingPages
    let (threads, found, counted) = try threadsWithUnread(query, counted: counting)
    return Page(
      items: threads, number: page, hasMore: found > Board.pageSize,
      total: counting ? counted : total)
  }

  /// How many threads the signed-in person can read (for "page X/Y").
  public func threadCount() throws -> Int {
    try client.count(Query(className: Board.threadClass))
  }

  /// Thread `number`; `E404001` when there is none.
  public func thread(_ number: Int) throws -> ForumThread {
    try threadWithUnread(number, countUpTo: UnreadState.countLimit)
  }

  /// Thread `number` to be read now: its read position, and `unread` only 0 or 1 (whether
  /// anything is unread). Counting a long thread's unread comments walks up to a thousand of
  /// them, which opening it does not need.
  public func threadToRead(_ number: Int) throws -> ForumThread {
    try threadWithUnread(number, countUpTo: 1)
  }

  /// Thread `number` with its read position and unread count (over https one request).
  private func threadWithUnread(_ number: Int, countUpTo limit: Int) throws -> ForumThread {
    guard
      let thread = try threadsWithUnread(try Board.threadQuery(number), countUpTo: limit).threads
        .first
    else { throw DatastoreError(.notFound, reason: BoardReason.noThread(number)) }
    return thread
  }

  /// The comments of a thread, oldest first, `pageSize` a page.
  public func comments(of thread: ForumThread, page: Int) throws -> Page<ForumComment> {
    let skip = try Board.offset(page: page)
    var query = Query(
      className: Board.commentClass, equalTo: ["thread": Board.pointer(to: thread.objectId)],
      order: ["number"], limit: Board.pageSize + 1, skip: skip, include: ["user"],
      includeKeys: User.shownFields)
    // While no comment has been deleted, the comment `skip` places in is number `skip + 1`: the
    // page starts by seeking the (thread, number) index, so every page costs what the first does.
    if thread.lastCommentNumber == thread.commentCount {
      query.skip = 0
      query.greaterThan = ["number": Int64(skip)]
      let objects = try client.find(query)
      return Page(
        items: try withQuotes(
          objects.prefix(Board.pageSize).map {
            ForumComment($0, threadNumber: thread.number, viewer: myId)
          }, of: thread),
        number: page, hasMore: objects.count > Board.pageSize)
    }
    // After deletions an offset steps over every comment before the page, so a page in the back
    // half of a long thread is read from the newest end: the last page then costs what the
    // first does.
    let after = thread.commentCount - skip - Board.pageSize
    let fromEnd = skip > thread.commentCount / 2 && skip < thread.commentCount
    if fromEnd {
      query.order = ["-number"]
      query.skip = max(0, after)
      query.limit = min(Board.pageSize, thread.commentCount - skip)
    }
    var objects = try client.find(query)
    if fromEnd { objects.reverse() }
    return Page(
      items: try withQuotes(
        objects.prefix(Board.pageSize).map {
          ForumComment($0, threadNumber: thread.number, viewer: myId)
        }, of: thread),
      number: page, hasMore: fromEnd ? after > 0 : objects.count > Board.pageSize)
  }

  /// The page a thread's last comments are on. Counted without adding first: a count written by
  /// hand near `Int.max` (sqlite3 on a shared board) would overflow and stop the program.
  public static func lastPage(commentCount: Int) -> Int {
    commentCount <= 0 ? 1 : (commentCount - 1) / pageSize + 1
  }

  /// The last page of `thread`'s comments (`show --page last`). The count the thread keeps, while
  /// it is one the engine can have kept (at most the last number, at most `maximumPage` pages);
  /// otherwise it was written by hand, and the comments are counted.
  public func lastPage(of thread: ForumThread) throws -> Int {
    Board.lastPage(commentCount: try commentTotal(of: thread))
  }

  /// How many comments `thread` has: the count it keeps while that is one the engine can have
  /// kept, else those the reader can see, counted.
  public func commentTotal(of thread: ForumThread) throws -> Int {
    let kept = Board.lastPage(commentCount: thread.commentCount)
    guard thread.commentCount > thread.lastCommentNumber || kept > Board.maximumPage else {
      return thread.commentCount
    }
    return try countComments(of: thread)
  }

  /// The comments of `thread` the reader can see, counted (a walk of the thread's index).
  public func countComments(of thread: ForumThread) throws -> Int {
    try client.count(
      Query(
        className: Board.commentClass, equalTo: ["thread": Board.pointer(to: thread.objectId)]))
  }

  /// The highest page number a listing takes.
  public static let maximumPage = 10_000_000

  /// Comment `number` of thread `threadNumber`.
  public func comment(_ number: Int, inThread threadNumber: Int) throws -> ForumComment {
    let thread = try threadObject(threadNumber)
    return ForumComment(
      try commentObject(number, of: thread), threadNumber: threadNumber,
      viewer: myId)
  }

  /// The stored bytes of a thread's image.
  public func imageBytes(of thread: ForumThread) throws -> [UInt8] {
    guard let image = thread.image else {
      throw DatastoreError(.notFound, reason: BoardReason.noImage(thread: thread.number))
    }
    return try client.getFile(name: image.fileName)
  }

  // MARK: Writing

  /// Pins (`true`) or unpins thread `number` (`ThreadFlag.pin`).
  @discardableResult
  public func pin(_ number: Int, _ pinned: Bool) throws -> ForumThread {
    try setFlag(.pin, of: number, pinned)
  }

  /// Sets (`true`) or clears `flag` on thread `number`: a moderator or the board's owner only
  /// (`E403001`, enforced by the engine as a `FlagRule`). Setting a set flag changes nothing.
  /// Returns the thread as it is now.
  @discardableResult
  public func setFlag(_ flag: ThreadFlag, of number: Int, _ on: Bool) throws -> ForumThread {
    let object = try threadObject(number, withAuthor: false)
    // Only public objects carry a flag (`FlagRule`): a private thread its reader can see is
    // refused as what it is, not as a thread that is not there.
    guard object.acl.readers.contains("*") else {
      throw DatastoreError(.noAccess, reason: flag.privateThread(number))
    }
    do {
      try client.setFlag(Board.threadClass, objectId: object.objectId, field: flag.field, on: on)
    } catch let error as DatastoreError where error.code == .noAccess {
      // The engine's refusal is about the role (its words differ by engine): said as the rule.
      throw DatastoreError(.noAccess, reason: flag.onlyModerators)
    }
    return try thread(number)
  }

  /// Posts a thread, with its image stored in the same write (`BoardWrites.newThread`). The
  /// engine numbers it.
  @discardableResult
  public func createThread(title: String, description: String, image: PreparedImage?) throws
    -> ForumThread
  {
    let title = try PostRules.title(title)
    let description = try PostRules.description(description)
    try beforePost?()
    let userId = try signedInUser()
    let write = BoardWrites.newThread(
      title: title, description: description, image: image, author: userId)
    let outcome = try perform(write) { _, error in error }
    guard var created = outcome.object(write.steps.count - 2) else { throw missingOutcome }
    created.included["user"] = me.object
    return ForumThread(created, viewer: myId)
  }

  /// Adds a comment to thread `threadNumber` (`BoardWrites.comment`). The engine numbers it,
  /// counts it and moves the thread to the top of the list, in the same transaction.
  /// With `replyTo`, the comment answers that comment of the same thread (`E404001` when there
  /// is none).
  @discardableResult
  public func addComment(to threadNumber: Int, text: String, replyTo: Int? = nil) throws
    -> ForumComment
  {
    let text = try PostRules.comment(text)
    try beforePost?()
    let userId = try signedInUser()
    if let replyTo, replyTo <= 0 {
      // Said as before: a missing thread first, then the comment's number.
      _ = try threadObject(threadNumber, withAuthor: false)
      try Board.checkNumber(replyTo, .comment)
    }
    try Board.checkNumber(threadNumber, .thread)
    let write = BoardWrites.comment(
      threadNumber: threadNumber, text: text, replyTo: replyTo, author: userId)
    let outcome = try perform(write) { step, error in
      if let closed = ThreadFlag.refusal(of: error, commentOn: threadNumber) { return closed }
      switch (step, error.code) {
      case (0, .notFound):
        return DatastoreError(.notFound, reason: BoardReason.noThread(threadNumber))
      case (1, .notFound) where replyTo != nil:
        return DatastoreError(
          .notFound, reason: BoardReason.noComment(thread: threadNumber, comment: replyTo ?? 0))
      default: return error
      }
    }
    guard let thread = outcome.object(0), var created = outcome.object(write.steps.count - 2)
    else { throw missingOutcome }
    created.included["user"] = me.object
    let comment = ForumComment(created, threadNumber: threadNumber, viewer: myId)
    return try withQuotes([comment], of: ForumThread(thread, viewer: myId))[0]
  }

  /// Deletes a thread of yours; the engine takes its comments and image along in the same
  /// transaction. Someone else's thread is `E403001` and nothing is deleted.
  /// A moderator's delete of someone else's public thread leaves a tombstone instead (see
  /// `Deletion`); anyone else is refused, saying who may.
  @discardableResult
  public func deleteThread(_ number: Int) throws -> Deletion {
    try Board.checkNumber(number, .thread)
    let write = BoardWrites.removeThread(number)
    return try deletion(
      write, label: "#\(number)", threadNumber: number,
      author: { try self.threadObject(number) })
  }

  /// Deletes a comment of yours; the engine counts the thread down. Someone else's is
  /// `E403001` and nothing is deleted.
  @discardableResult
  public func deleteComment(_ number: Int, inThread threadNumber: Int) throws -> Deletion {
    if number <= 0 {
      _ = try threadObject(threadNumber, withAuthor: false)
      try Board.checkNumber(number, .comment)
    }
    try Board.checkNumber(threadNumber, .thread)
    let write = BoardWrites.removeComment(number, inThread: threadNumber)
    return try deletion(
      write, label: "\(threadNumber)/\(number)", threadNumber: threadNumber,
      commentNumber: number,
      author: { try self.commentObject(number, of: try self.threadObject(threadNumber)) })
  }

  /// Sets your display name (1 to 40 characters).
  public func rename(to name: String) throws -> User {
    me = try client.setDisplayName(try PostRules.displayName(name))
    return me
  }

  // MARK: Helpers

  func signedInUser() throws -> String {
    guard let userId = client.userId else { throw DatastoreError(.authentication) }
    return userId
  }

  /// Thread `number`, with its author unless `withAuthor` is false (a write needs only the
  /// thread: one statement less).
  func threadObject(_ number: Int, withAuthor: Bool = true) throws -> DataObject {
    guard let object = try client.find(Board.threadQuery(number, withAuthor: withAuthor)).first
    else { throw DatastoreError(.notFound, reason: BoardReason.noThread(number)) }
    return object
  }

  /// Thread `number`, with an order (of one: numbers are unique) so that NCMB's search can ask
  /// it over https.
  static func threadQuery(_ number: Int, withAuthor: Bool = true) throws -> Query {
    try Board.checkNumber(number, .thread)
    return Query(
      className: Board.threadClass, equalTo: ["number": .int(Int64(number))],
      order: ["number"], limit: 1, include: withAuthor ? ["user"] : [])
  }

  func commentObject(_ number: Int, of thread: DataObject) throws -> DataObject {
    let threadNumber = thread["number"]?.intValue ?? 0
    try Board.checkNumber(number, .comment)
    guard
      let object = try client.find(
        Query(
          className: Board.commentClass,
          equalTo: [
            "thread": Board.pointer(to: thread.objectId), "number": .int(Int64(number)),
          ], order: ["number"], limit: 1, include: ["user"], includeKeys: User.shownFields)
      ).first
    else {
      throw DatastoreError(
        .notFound, reason: BoardReason.noComment(thread: Int(threadNumber), comment: number))
    }
    return object
  }

  static func pointer(to threadId: String) -> JSONValue {
    .pointer(className: threadClass, objectId: threadId)
  }

  static func offset(page: Int) throws -> Int {
    guard page >= 1, page <= maximumPage else {
      throw DatastoreError(.invalid, field: "page", reason: BoardReason.startsAtOne(.pages))
    }
    return (page - 1) * pageSize
  }

  /// REST shape as `--json` prints it: the object's one JSON shape (`restObject`) plus the
  /// author's display name and handle.
  static func restJSON(_ object: DataObject, displayName: String, userName: String)
    -> JSONValue
  {
    var plain = object
    plain.included = [:]
    guard case .object(var fields) = restObject(plain), !object.isDamaged else {
      return restObject(plain)
    }
    fields["displayName"] = .string(displayName)
    fields["userName"] = .string(userName)
    return .object(fields)
  }

  /// The classes whose objects the board writes and shapes.
  public static let boardClasses: Set<String> = [
    threadClass, commentClass, conversationClass, messageClass, preferenceClass,
  ]

  /// The one JSON shape of the board's objects wherever they are read, by `--json` and by
  /// `forum serve` (`NCMBPolicy.board`): the datastore's REST shape with the board's date
  /// fields as NCMB writes a date (`{"__type":"Date","iso":…}`; `createDate` and `updateDate`
  /// stay plain ISO strings), without the engine's bookkeeping (`lastCommentNumber`), and the
  /// objects it includes in the same shape. A damaged row is its id, dates, ACL, number and
  /// `"damaged": true`; an app's own classes keep the datastore's shape.
  public static let objectShape = ObjectShape(
    classes: Dictionary(
      uniqueKeysWithValues: boardClasses.map {
        ($0, ObjectShape.ClassShape(dateFields: dateFields, hiddenFields: ["lastCommentNumber"]))
      }), damagedKeeps: ["number"])

  /// An object in `objectShape`.
  public static func restObject(_ object: DataObject) -> JSONValue {
    objectShape.json(object)
  }

  /// A row that could not be read, in `objectShape`.
  static func damagedJSON(_ object: DataObject) -> JSONValue {
    var damaged = object
    damaged.isDamaged = true
    damaged.included = [:]
    return objectShape.json(damaged)
  }

  /// The board's own date fields, stored as milliseconds so the engine can compare them.
  static let dateFields =
    ["lastActivity", "editDate", "moderatedDate"] + ThreadFlag.all.map(\.field)

  /// The fields of `className` stored as milliseconds that `restObject` writes as Dates: what
  /// an app compares with a Date (`forum serve`'s queries).
  public static func millisecondDates(_ className: String) -> Set<String> {
    Set(objectShape.classes[className]?.dateFields ?? [])
  }

  /// NCMB writes a date field as `{"__type":"Date","iso":"…Z"}` (only `createDate` and
  /// `updateDate` are plain ISO strings): one format for every date a program reads.
  static func ncmbDates(_ fields: inout [String: JSONValue]) {
    for name in dateFields {
      if case .int(let milliseconds)? = fields[name] { fields[name] = dateJSON(milliseconds) }
    }
  }

  public static func dateJSON(_ milliseconds: Int64) -> JSONValue {
    ObjectShape.dateJSON(milliseconds)
  }
}
