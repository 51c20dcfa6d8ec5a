/// A database engine behind `Datastore`: SQLite (a file, one host) or PostgreSQL (a server, many
/// hosts). `Datastore.open(_:)` picks one by the location string; Forum and ForumCLI never see
/// which. No instance is reachable from outside Datastore, so a caller can only act through a
/// `DatastoreClient` it got by signing in.
///
/// Every engine enforces the same semantics, in its own SQL, so that a server can enforce them
/// against a hostile client:
///
/// - **Callers.** Object and file operations take the caller's `Principals` (`*`, the user's
///   objectId, `role:<name>`). SQLite filters with them. A server engine takes the caller from its
///   connection (PostgreSQL: `session_user` and its role membership, evaluated once per statement)
///   and uses the argument only to narrow: a caller without a user sees what `*` sees.
/// - **Reads.** A row the caller cannot read does not exist for that caller: `get`, `fileInfo`
///   and `fileBytes` say `E404001`, exactly as for a missing row, and `find`/`count` leave it out.
///   (Refinement of the backend's old `E403001` on reads: row-level security cannot tell the two
///   apart without leaking that the row exists.)
/// - **Conditional writes.** `update` and `delete` are one
///   `UPDATE/DELETE … WHERE <id> AND <caller may write> RETURNING …`; when nothing comes back,
///   the engine answers `E403001` if the caller can read the row, else `E404001`. Nothing is ever
///   read, merged in Swift and written back: field sets and increments are done in SQL.
/// - **Dates** (`createDate`, `updateDate`, the rules' activity field, session expiry) come from
///   the engine's clock (`now()`), never from the client. `updateDate` never goes backwards.
/// - **Rules** (`EngineRules`) run in SQL (triggers / security-definer functions) inside the
///   caller's transaction.
/// - **Secrets.** The engine stores only SHA-256 hashes of anonymous secrets and session tokens.
/// - **Errors.** Every failure is a `DatastoreError`; engine failures are `E500001` with a detail
///   a person can act on (which file or server, what to run).
public protocol DatastoreEngine: AnyObject, ReadingEngine {
  /// What the engine was opened on: a path, or a URI without its password.
  var location: String { get }

  /// A random id made when the database was created, stable across moves and copies of it. A
  /// profile keeps one secret per board id, so one leaked board never gives away another.
  var boardId: String { get }

  /// The rules in force: those recorded in the database (SQLite: installed by the last `prepare`
  /// with rules; PostgreSQL: by `forum init`), whoever opened it.
  var rules: EngineRules { get }

  /// The engine's clock: milliseconds since 1970, UTC.
  func now() throws -> Int64

  /// Makes the opened database ready for `rules` and `indexes`, or says why it is not.
  /// - SQLite: creates or migrates the schema (append-only migrations by `user_version`) and
  ///   installs the rules as triggers and the indexes, idempotently, in one transaction.
  /// - PostgreSQL: checks that `forum init` installed this schema version and these rules; a
  ///   missing or older schema is `E500001` whose detail says to run `forum init` as the database
  ///   owner. Members never need DDL.
  func prepare(rules: EngineRules, indexes: [IndexSpec]) throws

  /// `forum init`: creates or migrates the schema and installs `rules` and `indexes`,
  /// idempotently. PostgreSQL: run by the database owner. SQLite: the same as `prepare`.
  func install(rules: EngineRules, indexes: [IndexSpec]) throws

  /// `forum index add`: one more ordered index (`IndexSpec`), over the class's public rows on
  /// SQLite (`SQLiteEngine.findStatement`), its key columns and indexes on PostgreSQL (run by
  /// the database owner). Idempotent. The board's rules stay as they are.
  func addIndex(_ spec: IndexSpec) throws

  // MARK: Identity

  /// Signs in with the profile's secret for this board and returns the user, a fresh session and
  /// the caller's principals.
  /// - SQLite: the user whose stored hash is SHA-256(`secret`); otherwise, when `previousSecret`
  ///   (a profile's pre-board-id UUID) matches a user, that user, whose stored hash becomes
  ///   SHA-256(`secret`) (so the old UUID stops working on this board); otherwise a new user
  ///   (unique 10-character `userName`, ACL readers `*`, writers itself). The session token is
  ///   random; only its SHA-256 is stored, with an expiry `sessionLifetime` after `now()`.
  /// - PostgreSQL: the secrets are ignored; the user is the connecting role's (found or created by
  ///   a security-definer function). The returned token is whatever `caller(sessionToken:)` takes
  ///   back.
  /// `secret` must be 16 to 128 ASCII letters, digits, `-` or `_` (`E400002`).
  func signIn(secret: String, previousSecret: String?, sessionLifetime: Double) throws -> Login

  /// The principals a session token stands for; nil when it is unknown or expired.
  func caller(sessionToken: String) throws -> Principals?

  /// `caller(sessionToken:)` by a caller that has just taken the database's `stateMark()` and
  /// knows nothing was committed since, so the engine need not look again (`known`).
  func caller(sessionToken: String, known: StateMark?) throws -> Principals?

  /// The principals and user of `caller`'s session as the server last answered them, when
  /// the engine learns them apart from the caller it was given (an https board: a session
  /// resumed from the profile's kept answer, confirmed by the server before it is decided by);
  /// nil: the caller is what the engine gave.
  func confirmedSession(of caller: Principals) throws -> (principals: Principals, user: DataObject)?

  /// Ends every session of `userId`; their next request is `E401001`.
  func endSessions(userId: String) throws

  /// A new app user with a password account (`Accounts.swift`): `userName` in its `user` object
  /// (readers `*`, writers itself), `passwordHash` (Argon2id, made by the caller) under `key`
  /// (the name in lower case) where no caller reads it, and a new session. A `key` or name
  /// someone has already is `E400002` on `userName` with `StoreReason.alreadyExists`.
  /// PostgreSQL: a server role only.
  func signUp(userName: String, key: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login

  /// The user and hash of the password account under `key`; nil when there is none.
  func passwordCredential(key: String) throws -> PasswordCredential?

  /// A new session for `userId` if its password hash is still `passwordHash` (it was checked
  /// against it); nil when it changed meanwhile or the user went.
  func startPasswordSession(userId: String, passwordHash: String, sessionLifetime: Double)
    throws -> Login?

  /// Sets the password hash of `userId`, the caller itself (an anonymous user gets a password
  /// account under its `userName`), and ends the user's sessions but the one whose token hashes
  /// to `keeping`.
  func setPassword(userId: String, passwordHash: String, keeping: [UInt8]?, as caller: Principals)
    throws

  /// The board's NCMB keys (see `ApplicationKeys`): nil when none were made and `create` is
  /// false; new ones replace the old with `rotate`. Only the board's owner may call it.
  func applicationKeys(create: Bool, rotate: Bool) throws -> ApplicationKeys?

  /// Makes `userId` a member of `role`. Administration: on SQLite whoever holds the file may do it;
  /// on PostgreSQL only the owner (others get `E403001`).
  func addMember(_ userId: String, toRole role: String) throws

  // MARK: Transactions

  /// Runs `body` atomically: a throw undoes everything it wrote. Nested calls join the outer
  /// transaction (a throw inside undoes only the nested part). The engine retries the whole
  /// transaction on serialization failures and deadlocks (PostgreSQL 40001/40P01; SQLite takes
  /// the write lock up front and waits for it), so `body` may run more than once and must have no
  /// effects outside the store.
  func transaction<T>(_ body: () throws -> T) throws -> T

  /// True when `find` and `search` bring the objects their query's `include` names themselves
  /// (an engine across the network, whose server resolves them in the same request).
  var resolvesIncludes: Bool { get }

  /// Runs `operation` whole for `client` (`DatastoreClient.perform`): the engines here run its
  /// steps (`DatastoreClient.run`) in one transaction of their own; an engine across the network
  /// sends it as one request.
  func perform(_ operation: WriteOperation, for client: DatastoreClient) throws -> WriteOutcome

  /// Group commit (`Datastore.group`): `count` independent writes, each undone alone when it
  /// throws, made durable together. By default each is a transaction of its own.
  func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?]

  /// Sets the connection up for a server's pool (`Datastore.serve`).
  func serve(checkpointsApart: Bool) throws

  /// Copies committed writes from the log into the database without waiting for anyone
  /// (`Datastore.checkpoint`).
  func checkpoint() throws

  // MARK: Objects (input is already validated by `DatastoreClient`)

  /// Inserts an object with a fresh objectId, dates from the engine's clock, `fields` and `acl`,
  /// then applies the rules (sequence, owner, child). Returns the object as stored, rule-set
  /// fields included.
  func insert(_ className: String, fields: [String: JSONValue], acl: ACL, as caller: Principals)
    throws -> DataObject

  /// One object; `E404001` when it is missing or the caller cannot read it.
  func get(_ className: String, objectId: String, as caller: Principals) throws -> DataObject

  /// Objects matching `query` that the caller may read; the rest are left out silently. The
  /// readers filter is one an index can serve.
  func find(_ query: Query, as caller: Principals) throws -> [DataObject]

  /// `find`'s objects written one after another, comma-separated, as `shape` writes them (an
  /// engine that stores JSON text writes it straight, building no object where it can); their
  /// ids, in order. `query.include` is the engine's to resolve only where `resolvesIncludes`.
  func find(
    _ query: Query, as caller: Principals, writing shape: ObjectShape, to out: inout [UInt8]
  ) throws -> [String]

  /// `get`'s object written as `shape` writes it.
  func get(
    _ className: String, objectId: String, as caller: Principals, writing shape: ObjectShape,
    to out: inout [UInt8]
  ) throws

  /// How many objects match `query` among those the caller may read.
  func count(_ query: Query, as caller: Principals) throws -> Int

  /// `find`, and when the page is full (as many objects as `query.limit`) `count` of the same
  /// query too: a page and how many pages there are. An engine across the network asks both in
  /// one request and may give the count of a page that is not full.
  func findCounted(_ query: Query, as caller: Principals) throws -> (
    objects: [DataObject], count: Int?
  )

  /// `find` (and `count` as `findCounted` gives it, when `counted`) with the caller's `unread`
  /// state of each object found, counting up to `limit`, as one step; nil when the engine has no
  /// such step (the client then asks them in turn). An engine across the network asks all in one
  /// request.
  func findWithUnread(_ query: Query, counted: Bool, countUpTo limit: Int, as caller: Principals)
    throws -> FoundWithUnread?

  /// Objects of the search's target classes holding every term in their text fields (declared
  /// by `IndexSpec(textOf:fields:)` when the database was prepared), among those the caller may
  /// read, best first. A class without a text index is `E400002`.
  func search(_ search: TextSearch, as caller: Principals) throws -> [DataObject]

  /// The objects with these ids that the caller may read (for `include`), in any order, with
  /// only the top-level fields in `keys` (nil: all), building no more than `budget` of them
  /// (`Query.costBudget`; nil: no bound).
  func fetch(objectIds: [String], keys: Set<String>?, budget: Int?, as caller: Principals) throws
    -> [DataObject]

  /// Conditional update: sets `fields` (`.null` removes one), adds `increments` to integer fields
  /// (a missing field counts as 0; a field holding anything but an integer is `E400002`), replaces
  /// the ACL when `acl` is given, changes `arrays` in place (a field that holds neither an array
  /// nor null, or another class's relation, is `E400002`), and moves `updateDate` to `now()` (never backwards), all in one
  /// `UPDATE … WHERE <writable> RETURNING`. Nothing returned: `E403001` if readable, else `E404001`.
  func update(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], arrays: [String: ArrayChange], acl: ACL?,
    as caller: Principals
  ) throws -> DataObject

  /// Conditional delete (`DELETE … WHERE <writable> RETURNING`), with the rules' cascades.
  /// Nothing deleted: `E403001` if readable, else `E404001`.
  func delete(_ className: String, objectId: String, as caller: Principals) throws

  // MARK: Files

  /// Stores a file with dates from the engine's clock. A name already taken is `E400002`.
  func insertFile(
    name: String, bytes: [UInt8], mimeType: String, acl: ACL, as caller: Principals
  ) throws -> FileInfo

  /// A file's metadata; `E404001` when missing or unreadable.
  func fileInfo(name: String, as caller: Principals) throws -> FileInfo

  /// A file's bytes exactly as stored; `E404001` when missing or unreadable.
  func fileBytes(name: String, as caller: Principals) throws -> [UInt8]

  /// NCMB's file search: the files the caller may read whose metadata (`fileName`, `mimeType`,
  /// `fileSize`, `createDate`, `updateDate`) matches `query.conditions`, in `query.order`, paged
  /// by `limit`/`skip` (the class, equalities and includes of `query` are not used). The
  /// conditions and order are rendered by the same code as an object query's, over each file
  /// seen as an object of those fields; the rest are left out silently, as `find` does.
  func findFiles(_ query: Query, as caller: Principals) throws -> [FileInfo]

  /// How many files `findFiles` would find without paging.
  func countFiles(_ query: Query, as caller: Principals) throws -> Int

  /// Conditional delete of a file: `E403001` if readable but not writable, else `E404001`.
  func deleteFile(name: String, as caller: Principals) throws

  /// Replaces a file's ACL (NCMB's `PUT /files/NAME`), moving its `updateDate` by the engine's
  /// clock: one conditional write, `E403001` if readable but not writable, else `E404001`.
  func updateFile(name: String, acl: ACL, as caller: Principals) throws -> FileInfo

  // MARK: Change feed

  /// The sequence of the newest change in the database (0 when there is none): a reader that
  /// starts here sees what happens from now on.
  func latestChange() throws -> Int64

  /// Changes after `since` (at most `limit`), oldest first, each when the caller could read the
  /// object as it was then: every change keeps the readers the object had (a child's are its
  /// parent's), so a deletion is seen by those who could read what went, and nobody else.
  func changes(since: Int64, limit: Int, as caller: Principals) throws -> ChangeBatch

  /// A descriptor that becomes readable when another process commits (PostgreSQL: the
  /// connection's socket, after `LISTEN`), or nil when the engine is checked by time instead.
  func wakeFileDescriptor() throws -> Int32?

  /// How often `hasPendingWakeup` should be asked when there is no descriptor to wait on.
  var wakePollInterval: Double { get }

  /// True when another process may have committed since the last read of the feed. Cheap (no
  /// table is read). Throws when the database is gone (file removed, server closed the connection).
  func hasPendingWakeup() throws -> Bool

  /// A mark of the database's state as this connection sees it: two equal marks from this
  /// engine mean that nothing was committed between them, by this connection or any other.
  /// Nil when the engine cannot tell cheaply (then nothing read may be kept for later). Throws
  /// when the database is gone.
  func stateMark() throws -> StateMark?

  /// Rows this connection has written since it opened (what moves its own part of the mark):
  /// reading it costs nothing. 0 on an engine without marks.
  var ownChanges: Int64 { get }

  /// Throws when the database is gone, as `stateMark()` does, without reading its state.
  func checkInPlace() throws

  /// The objects written after the feed's number `sequence`, oldest first, at most `limit`;
  /// nil when the feed no longer holds them all (pruned) or there are more, or the engine
  /// keeps no feed it can read so (then the caller forgets everything).
  func writtenObjects(after sequence: Int64, limit: Int) throws -> [WrittenObject]?

  /// Bytes of JSON the objects the caller created hold (their `data`, as stored), for a quota
  /// per user; nil when the engine does not count them (PostgreSQL, remote) or the caller has
  /// no user.
  func storedBytes(as caller: Principals) throws -> Int?

  /// The board's bound on the bytes one member's objects and files hold together (the owner's
  /// `mod storage-per-member`; on PostgreSQL what its triggers hold members' own writes to),
  /// nil when the board sets none. Every member may read it.
  func memberStorageBytes(as caller: Principals) throws -> Int?

  /// Sets the board's storage bound per member (nil: none): the board's owner only (`E403001`).
  func setMemberStorageBytes(_ bytes: Int?, as caller: Principals) throws

  /// `forum import`: the items as given (ids, dates, ACLs; anonymous ids stored as sign-up
  /// stores them, hashed), in one transaction, as the board's owner (PostgreSQL: the schema's
  /// owner, else `E403001`). An item already there exactly so is `unchanged`; one whose id is
  /// taken otherwise is a `conflict` and writes nothing. Rows are written as they were, not
  /// through the rules: what a rule's trigger changes in a row the batch imported (a parent's
  /// counters when its children come) is set back to as given at the end of the batch. Items
  /// come from `next` (nil: the end), each outcome goes to `outcome`.
  func importItems(
    next: () throws -> ImportItem?, outcome: (ImportOutcome) throws -> Void) throws

  /// `forum import`: the rows stored under these ids, as the owner reads them.
  func storedObjects(_ objectIds: [String]) throws -> [String: ImportedObject]

  /// `forum import`: the counter `name`'s value (0 when absent).
  func counter(_ name: String) throws -> Int64

  /// One bounded step of index upkeep that no commit of a person's write does (SQLite: indexing
  /// the rows commits queued, merging the full-text index's segments), in its own short
  /// transaction; `idle` when no write waits (a small queue is then worth a step too). True
  /// when it did work and more may be left; false when there was nothing to do.
  func tidy(idle: Bool) throws -> Bool
}

extension DatastoreEngine {
  /// An engine on this machine reads each in turn as cheaply (`DatastoreClient.findWithUnread`).
  func findWithUnread(_ query: Query, counted: Bool, countUpTo limit: Int, as caller: Principals)
    throws -> FoundWithUnread?
  {
    nil
  }

  /// The objects with these ids that the caller may read, whole.
  func fetch(objectIds: [String], as caller: Principals) throws -> [DataObject] {
    try fetch(objectIds: objectIds, keys: nil, budget: nil, as: caller)
  }

  func caller(sessionToken: String, known: StateMark?) throws -> Principals? {
    try caller(sessionToken: sessionToken)
  }

  func confirmedSession(of caller: Principals) throws -> (principals: Principals, user: DataObject)?
  {
    nil
  }

  func findCounted(_ query: Query, as caller: Principals) throws -> (
    objects: [DataObject], count: Int?
  ) {
    try findThenCount(query, as: caller)
  }

  /// `findCounted` as two reads; counting walks the index: only when the page is full.
  func findThenCount(_ query: Query, as caller: Principals) throws -> (
    objects: [DataObject], count: Int?
  ) {
    let objects = try find(query, as: caller)
    return (objects, objects.count < query.limit ? nil : try count(query, as: caller))
  }

  var ownChanges: Int64 { 0 }

  var resolvesIncludes: Bool { false }

  func checkInPlace() throws {}

  func writtenObjects(after sequence: Int64, limit: Int) throws -> [WrittenObject]? { nil }

  func serve(checkpointsApart: Bool) throws {}

  func checkpoint() throws {}

  func storedBytes(as caller: Principals) throws -> Int? { nil }

  func memberStorageBytes(as caller: Principals) throws -> Int? { nil }

  func setMemberStorageBytes(_ bytes: Int?, as caller: Principals) throws {
    throw DatastoreError.invalid("memberStorageBytes", "this engine keeps no storage bound")
  }

  func tidy(idle: Bool) throws -> Bool { false }

  func group(_ count: Int, _ write: (Int) throws -> Void) throws -> [Error?] {
    (0..<count).map { index in
      do {
        try transaction { try write(index) }
        return nil
      } catch {
        return error
      }
    }
  }
}

/// See `DatastoreEngine.stateMark()`: comparable only with marks of the same engine.
public struct StateMark: Equatable, Sendable {
  let external: Int64
  let own: Int64
  /// What the commits between two marks wrote (SQLite's `write_clocks`): the change feed's
  /// last number (objects written) and a clock per kind of write outside the feed. Two marks
  /// whose `external`/`own` differ while all of these are equal saw a commit that none of them
  /// records (a hand edit of another table, or of a row that left its update date alone).
  public let feed: Int64
  /// Sessions, role members, anonymous identities, password accounts.
  public let identity: Int64
  /// The board's keys and rules (`meta`).
  public let meta: Int64
  public let files: Int64
  /// Commits that change no answer (index upkeep, `tidy`).
  public let quiet: Int64

  init(external: Int64, own: Int64, clocks: StateMark? = nil) {
    self.external = external
    self.own = own
    feed = clocks?.feed ?? 0
    identity = clocks?.identity ?? 0
    meta = clocks?.meta ?? 0
    files = clocks?.files ?? 0
    quiet = clocks?.quiet ?? 0
  }

  init(feed: Int64, identity: Int64, meta: Int64, files: Int64, quiet: Int64) {
    external = 0
    own = 0
    self.feed = feed
    self.identity = identity
    self.meta = meta
    self.files = files
    self.quiet = quiet
  }

  /// True when every clock is the same as `other`'s: no commit between the two marks wrote
  /// anything recorded.
  public func recordsTheSameWrites(as other: StateMark) -> Bool {
    feed == other.feed && identity == other.identity && meta == other.meta
      && files == other.files && quiet == other.quiet
  }
}

/// An object written, as the change feed recorded it (`DatastoreEngine.writtenObjects`): no
/// readers, for a server that empties what it remembered of it, not for a reader.
public struct WrittenObject: Equatable, Sendable {
  public let sequence: Int64
  public let className: String
  public let objectId: String
  /// The parent a child names (`ChildRule.parentField`), if the class is a child's.
  public let parentId: String?
  public let kind: Change.Kind

  public init(
    sequence: Int64, className: String, objectId: String, parentId: String?, kind: Change.Kind
  ) {
    self.sequence = sequence
    self.className = className
    self.objectId = objectId
    self.parentId = parentId
    self.kind = kind
  }
}

extension DatastoreEngine {
  /// `update` without array changes.
  func update(
    _ className: String, objectId: String, set fields: [String: JSONValue],
    increment increments: [String: Int64], acl: ACL?, as caller: Principals
  ) throws -> DataObject {
    try update(
      className, objectId: objectId, set: fields, increment: increments, arrays: [:], acl: acl,
      as: caller)
  }
}

/// A page of objects, how many match when counted, and the caller's read state in each of them
/// (`DatastoreClient.findWithUnread`).
public struct FoundWithUnread: Sendable {
  public var objects: [DataObject]
  public var count: Int?
  public var unread: [String: UnreadState]

  public init(objects: [DataObject], count: Int?, unread: [String: UnreadState]) {
    self.objects = objects
    self.count = count
    self.unread = unread
  }
}
