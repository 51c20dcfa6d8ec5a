import Datastore
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Answers to reads, kept for the whole server (`KeptAnswers`) while nothing they depend on was
/// written: the next identical read by a caller with the same principals is answered without
/// reading or encoding anything. A caller's answers are keyed by their principals (`*`, their
/// user id, their roles), so nobody is ever given what another caller's ACL let them read. An
/// engine without a mark (PostgreSQL) keeps nothing.
///
/// Each pooled connection has one `ReadCache`: its view of the database's state (`StateMark`)
/// and the board's keys. Looking at the mark costs a statement, so it is looked at only when
/// this server has written since the last look (`StorePool`'s generation: its own writes are
/// seen by the next request on every connection) or when the last look is `recheck`
/// milliseconds old: a write by another process (the prompt, `sqlite3`) is seen at most that
/// late. When the mark moved, what the commits wrote is read (the change feed's objects and
/// the clocks of the tables outside it, `StateMark`) and only the answers that can depend on
/// it go (`KeptAnswers.advance`); a commit that none of that records (a hand edit) empties
/// everything.
final class ReadCache {
  let kept: KeptAnswers
  private var mark: StateMark?
  /// `kept.flushes` when `mark` was taken: an answer read after a flush it did not see is not
  /// kept.
  private var flushes: UInt64 = 0
  /// The board's keys as read at `mark`, ready to check signatures.
  private var keys: NCMBSignature.Keys?
  /// The pool's generation and the clock when `mark` was looked at.
  private var lookedGeneration: UInt64 = 0
  private var lookedAt: Int64 = 0

  /// The keys of an engine without a mark, one copy for the whole pool (`SharedKeys`).
  private let sharedKeys: SharedKeys

  init(_ kept: KeptAnswers, keys sharedKeys: SharedKeys = SharedKeys()) {
    self.kept = kept
    self.sharedKeys = sharedKeys
  }

  /// Starts a request: the database's mark, looked at again with `look` unless the server
  /// wrote nothing since the last look (`generation`) and that look is younger than `recheck`
  /// milliseconds at `now`. The kept answers that the writes since depend on go (`written`
  /// reads the objects written after a feed number, `rules` says which classes are whose
  /// children). Nil: nothing may be kept.
  func revalidate(
    generation: UInt64, now: Int64, recheck: Int64, look: () throws -> StateMark?,
    written: (Int64) throws -> [WrittenObject]?, rules: () -> EngineRules
  ) throws -> StateMark? {
    kept.forgetIfDue(now: now)
    if let mark, generation == lookedGeneration, now >= lookedAt, now - lookedAt < recheck {
      return mark
    }
    // The flush count first: a flush after it is one this request may not have seen.
    let flushesBefore = kept.flushCount
    let looked = try look()
    lookedGeneration = generation
    lookedAt = now
    guard let looked else {
      // Without a mark (PostgreSQL) the keys stay for their own `recheck` (`keys`).
      if mark != nil { keys = nil }
      mark = nil
      return nil
    }
    if let mark, looked != mark, looked.recordsTheSameWrites(as: mark) {
      // Committed, and nothing records what: everything goes.
      kept.forgetAll()
    }
    if let mark, looked != mark, looked.meta != mark.meta || looked.recordsTheSameWrites(as: mark) {
      keys = nil
    }
    if mark == nil {
      keys = nil
      // A new connection cannot tell a hand edit from before its first look: answers are
      // kept at most `KeptAnswers.preciseMilliseconds` from now.
      kept.keepAtMostAMoment(now: now)
    }
    try kept.advance(to: looked, now: now, written: written, rules: rules)
    mark = looked
    flushes = flushesBefore
    return looked
  }

  /// The board's keys: read from the store once per state, or, on an engine without a mark
  /// (PostgreSQL), again once they are `recheck` milliseconds old at `now`, by whichever pooled
  /// connection comes first (`SharedKeys`; the server's own writes never change them: `forum
  /// keys --rotate` is the owner's, from another process, and is seen as late as another
  /// process's write on SQLite).
  func keys(now: Int64, recheck: Int64, _ read: () throws -> NCMBSignature.Keys?) throws
    -> NCMBSignature.Keys?
  {
    guard mark != nil else { return try sharedKeys.keys(now: now, recheck: recheck, read) }
    if let keys { return keys }
    let read = try read()
    keys = read
    return read
  }

  func answer(for key: String) -> HTTPResponse? {
    mark == nil ? nil : kept.answer(for: key)
  }

  /// Keeps `response` for `key` unless something was written since this request's mark that
  /// the kept answers have already been cleared of (then it may be older than that write).
  func keep(
    _ response: HTTPResponse, for key: String, dependsOn dependence: @autoclosure () -> Dependence
  ) {
    guard let mark, response.status == 200,
      response.body.count <= KeptAnswers.maximumAnswerBytes
    else { return }
    kept.keep(response, for: key, dependence(), readAt: mark, flushes: flushes)
  }

  /// What a read's answer depends on besides the database: the request as sent (method, path,
  /// query) and who asks (their principals, sorted).
  static func key(_ request: HTTPRequest, _ principals: Principals) -> String {
    var key = request.method + " " + request.path + "?" + request.rawQuery + "\n"
    for (index, name) in principals.names.sorted().enumerated() {
      if index > 0 { key += " " }
      key += name
    }
    return key
  }

  /// What in the database a kept answer was read from, so that a write empties only the
  /// answers it can change.
  struct Dependence {
    enum Kind: Equatable {
      /// `classes/C/ID`.
      case object(String)
      /// A find or count on the class; `scope`: every row of it is a child of this parent (its
      /// `where` names the parent by the child rule's pointer field).
      case query(scope: String?)
      /// Anything else (users, roles, files, a query that reads other classes): any write.
      case everything
    }
    let className: String
    let kind: Kind
    /// Every object id the answer's bytes name (its rows' and their pointers'), once or more.
    let ids: [ObjectIdKey]
    /// The query's `where` or `order` names a field the rules' bookkeeping writes (a parent's
    /// counters and last activity), which a child's write changes with no update date.
    let readsBookkeeping: Bool

    static let everything = Dependence(
      className: "", kind: .everything, ids: [], readsBookkeeping: true)

    /// The dependence of a GET on `route` (`classes/C[/ID]`) answered with `body`.
    static func of(
      _ route: NCMBRoute, _ parameters: [String: String], body: [UInt8], rules: EngineRules
    ) -> Dependence {
      guard route.resource == .classes, let className = route.names.first else {
        return .everything
      }
      // An include reads the objects pointed at; `$inQuery`, `$select`, `$relatedTo` other
      // classes and rows.
      if parameters["include"] != nil { return .everything }
      let ids = objectIds(in: body)
      if route.names.count == 2 {
        return Dependence(
          className: className, kind: .object(route.names[1]), ids: ids, readsBookkeeping: false)
      }
      let whereText = parameters["where"] ?? ""
      for operatorName in ["$inQuery", "$notInQuery", "$select", "$dontSelect", "$relatedTo"]
      where contains(whereText, operatorName) {
        return .everything
      }
      let order = parameters["order"] ?? ""
      let bookkept = rules.children.filter { $0.parentClass == className }.flatMap {
        [$0.countField, $0.lastNumberField, $0.activityField]
      }
      let readsBookkeeping = bookkept.contains {
        contains(whereText, $0) || contains(order, $0)
      }
      var scope: String?
      if let rule = rules.childRule(of: className), !whereText.isEmpty,
        case .object(let conditions)? = try? JSONValue.parse(whereText),
        case .object(let pointer)? = conditions[rule.parentField],
        pointer["__type"] == .string("Pointer"),
        pointer["className"] == .string(rule.parentClass),
        case .string(let parentId)? = pointer["objectId"]
      {
        scope = parentId
      }
      return Dependence(
        className: className, kind: .query(scope: scope), ids: ids,
        readsBookkeeping: readsBookkeeping)
    }

    /// Whether `text` holds `name`'s bytes: the names are ASCII, and `String.contains` searched
    /// with Unicode's rules (2 % of the mix's server time, on every answer kept).
    static func contains(_ text: String, _ name: String) -> Bool {
      var text = text
      var name = name
      return text.withUTF8 { haystack in
        name.withUTF8 { needle in
          guard let first = needle.first, needle.count <= haystack.count else {
            return false  // as String.contains: the empty name is in no text
          }
          let last = haystack.count - needle.count
          var index = 0
          while index <= last {
            if haystack[index] == first,
              haystack[index..<index + needle.count].elementsEqual(needle)
            {
              return true
            }
            index += 1
          }
          return false
        }
      }
    }

    /// The values of every `"objectId":"…"` in compact JSON (`JSONValue.jsonBytes`), once or
    /// more (the indexes take repeats; one among the last four found is left out: a page of
    /// comments names its thread twenty times, each beside its author). Found by the marker's
    /// capital `I`, rare in the rest of an answer, with libc's `memchr`, which steps over many
    /// bytes at a time.
    static func objectIds(in body: [UInt8]) -> [ObjectIdKey] {
      let marker = Array(#""objectId":""#.utf8)
      let capital = 7  // where the marker's `I` is
      var ids: [ObjectIdKey] = []
      body.withUnsafeBufferPointer { bytes in
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var index = capital
        while index < count,
          let found = memchr(base + index, Int32(UInt8(ascii: "I")), count - index)
        {
          let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
          let start = at - capital + marker.count
          guard start <= count,
            marker.withUnsafeBufferPointer({
              memcmp(base + at - capital, $0.baseAddress!, $0.count)
            })
              == 0
          else {
            index = at + 1
            continue
          }
          var close = start
          while close < count, bytes[close] != UInt8(ascii: "\"") { close += 1 }
          let id = ObjectIdKey(UnsafeBufferPointer(rebasing: bytes[start..<close]))
          if !ids.suffix(4).contains(id) { ids.append(id) }
          index = close + capital
        }
      }
      return ids
    }
  }
}

/// The answers every connection of one server keeps (`ReadCache`), with indexes from what each
/// depends on to the answers, and the state they are kept at (`current`): an answer is kept
/// only by a request that started at that state, and each write read since empties the answers
/// that depend on what it wrote.
final class KeptAnswers: Sendable {
  /// Memory the kept answers may take in all (`cost`), and the largest body kept. The whole
  /// server stays under 100 MB of its own (BENCHMARKS N3): at 128 MB of bodies alone, the
  /// demo's reads left it at 300 MB, and an app sending tiny answers (a count, each its own
  /// `where`) could keep millions of entries whose keys and indexes no one counted.
  static let maximumBytes = 32 << 20
  static let maximumAnswerBytes = 256 << 10

  /// What keeping `response` for `key` takes, not only its body: the key (once in the answers,
  /// referenced from the indexes), the headers, the entry and its index slots. Counted high:
  /// 200,000 tiny answers kept this way took about 530 bytes each of the process's memory
  /// (RssAnon), counted 690.
  static func cost(
    of response: HTTPResponse, for key: String, _ dependence: ReadCache.Dependence
  ) -> Int {
    // The body's room, not its length: a body written as it grows holds up to twice its bytes.
    var cost = response.body.capacity + key.utf8.count + 512 + 48 * dependence.ids.count
    for header in response.headers { cost += header.name.utf8.count + header.value.utf8.count + 32 }
    return cost
  }
  /// How long answers are kept after the first write told precisely (by the feed) rather than
  /// by emptying everything: a hand edit that no clock records, committed beside an object
  /// write, is seen at most this late.
  static let preciseMilliseconds: Int64 = 1000
  /// Most written objects read at once; more and everything goes.
  static let writtenLimit = 2000

  /// A plain mutex, not `Synchronization.Mutex`: on Linux that one is a priority-inheritance
  /// futex, which goes through the kernel whenever two threads meet, and every request of every
  /// connection takes this lock a few times (issue 29: the mix ran 14 % faster without it).
  private let state = ConditionMutex(State())

  var flushCount: UInt64 { state.withLock { $0.flushes } }

  func answer(for key: String) -> HTTPResponse? { state.withLock { $0.answers[key]?.response } }

  /// The keys of the answers kept now (tests look at what a write emptied).
  var keptKeys: [String] { state.withLock { Array($0.answers.keys) } }
  /// How many answers are kept now, and their `cost` summed.
  var keptCount: Int { state.withLock { $0.answers.count } }
  var keptCost: Int { state.withLock { $0.bytes } }

  /// Whether a thread holds the answers' lock now (tests: nothing slow runs under it).
  var isLockedNow: Bool { state.withLockIfAvailable { _ in false } ?? true }

  func keep(
    _ response: HTTPResponse, for key: String, _ dependence: ReadCache.Dependence,
    readAt mark: StateMark, flushes seen: UInt64
  ) {
    state.withLock { $0.keep(response, for: key, dependence, readAt: mark, flushes: seen) }
  }

  func forgetAll() { state.withLock { $0.forgetAllLocked() } }

  /// Empties everything once answers were kept past a precise write for `preciseMilliseconds`.
  func forgetIfDue(now: Int64) { state.withLock { $0.forgetIfDue(now: now) } }

  /// Answers are kept at most `preciseMilliseconds` after `now`.
  func keepAtMostAMoment(now: Int64) {
    state.withLock { if $0.preciseSince == nil { $0.preciseSince = now } }
  }

  /// Moves the kept answers to `mark`: the answers that depend on what was written between
  /// the state they were kept at and `mark` go. A mark behind it (another connection looked
  /// later) changes nothing. The written objects are read outside the lock (a database read
  /// held under it stalled every other connection's request); the answers stay at their state
  /// meanwhile, so none is kept from a request at `mark` before they are emptied, and what was
  /// read is applied only if the answers are still behind `mark`.
  func advance(
    to mark: StateMark, now: Int64, written: (Int64) throws -> [WrittenObject]?,
    rules: () -> EngineRules
  ) throws {
    guard let from = state.withLock({ $0.advanceWithoutReading(to: mark, now: now, rules: rules) })
    else { return }
    let objects = try written(from)
    state.withLock {
      $0.advance(to: mark, now: now, objects: objects, readAfter: from, rules: rules)
    }
  }
}

extension KeptAnswers {
  /// The answers, their indexes and their state, behind the lock.
  fileprivate struct State {
    struct Entry {
      let response: HTTPResponse
      let dependence: ReadCache.Dependence
      let cost: Int
    }
    var answers: [String: Entry] = [:]
    /// The kept answers' `cost`, summed.
    var bytes = 0
    /// Keys by what they depend on. An index may name a key whose answer went or was kept again
    /// since: emptying it then costs one answer more, never a stale one.
    var objectKeys: [String: [String]] = [:]
    var objectClassKeys: [String: [String]] = [:]
    var idKeys: [ObjectIdKey: [String]] = [:]
    var unscopedKeys: [String: [String]] = [:]
    var scopeKeys: [String: [String]] = [:]
    var scopedClassKeys: [String: [String]] = [:]
    var bookkeepingKeys: [String: [String]] = [:]
    var everythingKeys: [String] = []

    var current: StateMark?
    /// How many times everything went: a request that saw fewer keeps nothing.
    var flushes: UInt64 = 0
    var preciseSince: Int64?

    mutating func keep(
      _ response: HTTPResponse, for key: String, _ dependence: ReadCache.Dependence,
      readAt mark: StateMark, flushes seen: UInt64
    ) {
      guard seen == flushes, let current, current.recordsTheSameWrites(as: mark) else { return }
      let cost = KeptAnswers.cost(of: response, for: key, dependence)
      if bytes + cost > KeptAnswers.maximumBytes { forgetAllLocked() }
      if let old = answers[key] { bytes -= old.cost }
      answers[key] = Entry(response: response, dependence: dependence, cost: cost)
      bytes += cost
      let className = dependence.className
      switch dependence.kind {
      case .everything:
        everythingKeys.append(key)
        return
      case .object(let id):
        objectKeys[className + "/" + id, default: []].append(key)
        objectClassKeys[className, default: []].append(key)
      case .query(let scope?):
        scopeKeys[className + "/" + scope, default: []].append(key)
        scopedClassKeys[className, default: []].append(key)
      case .query(nil):
        unscopedKeys[className, default: []].append(key)
      }
      if dependence.readsBookkeeping { bookkeepingKeys[className, default: []].append(key) }
      for id in dependence.ids { idKeys[id, default: []].append(key) }
    }

    mutating func forgetIfDue(now: Int64) {
      if let since = preciseSince, now - since >= KeptAnswers.preciseMilliseconds || now < since {
        forgetAllLocked()
      }
    }

    mutating func forgetAllLocked() {
      answers.removeAll()
      bytes = 0
      objectKeys.removeAll()
      objectClassKeys.removeAll()
      idKeys.removeAll()
      unscopedKeys.removeAll()
      scopeKeys.removeAll()
      scopedClassKeys.removeAll()
      bookkeepingKeys.removeAll()
      everythingKeys.removeAll()
      flushes &+= 1
      preciseSince = nil
    }

    /// `advance` as far as it needs no read: nil when done, else the feed number after which
    /// the written objects are to be read (the answers are left where they are).
    mutating func advanceWithoutReading(
      to mark: StateMark, now: Int64, rules: () -> EngineRules
    ) -> Int64? {
      guard let current else {
        current = mark
        return nil
      }
      guard isAhead(mark, of: current) else { return nil }
      if mark.meta == current.meta, mark.feed != current.feed { return current.feed }
      advance(to: mark, now: now, objects: nil, readAfter: current.feed, rules: rules)
      return nil
    }

    /// Moves the answers from `current` to `mark`, `objects` the ones written after the feed
    /// number `readAfter` (nil: too many, or not read because the feed did not move).
    mutating func advance(
      to mark: StateMark, now: Int64, objects: [WrittenObject]?, readAfter: Int64,
      rules: () -> EngineRules
    ) {
      guard let current else {
        current = mark
        return
      }
      // Another connection moved them as far or further while this one read.
      guard isAhead(mark, of: current) else { return }
      defer { self.current = mark }
      if mark.meta != current.meta {
        forgetAllLocked()
        return
      }
      if mark.identity != current.identity || mark.files != current.files {
        forget(everythingKeys)
        everythingKeys.removeAll()
      }
      guard mark.feed != current.feed else { return }
      // What was read covers every write after `current` only if it was read from no later.
      guard let objects, readAfter <= current.feed else {
        forgetAllLocked()
        return
      }
      forget(everythingKeys)
      everythingKeys.removeAll()
      let rules = rules()
      for object in objects { forget(object, rules) }
      if preciseSince == nil { preciseSince = now }
    }

    private func isAhead(_ mark: StateMark, of current: StateMark) -> Bool {
      mark.feed > current.feed || mark.identity > current.identity || mark.meta > current.meta
        || mark.files > current.files || mark.quiet > current.quiet
    }

    /// Empties what a write of `object` can change: the object's own answer; the finds on its
    /// class (of its parent only, for a new or deleted child); for a child, its parent's answer
    /// and the finds that name the parent or read its counters (the parent's counters moved);
    /// for a parent changed, the answers that name it, its children's finds by it and its
    /// children's unscoped finds (their readers follow the parent's).
    private mutating func forget(_ object: WrittenObject, _ rules: EngineRules) {
      let className = object.className
      forget(objectKeys.removeValue(forKey: className + "/" + object.objectId))
      let childRule = rules.childRule(of: className)
      forget(unscopedKeys.removeValue(forKey: className))
      if childRule != nil, let parent = object.parentId, object.kind != .updated {
        // A child's parent pointer is fixed: its finds by another parent are not changed.
        forget(scopeKeys.removeValue(forKey: className + "/" + parent))
      } else {
        forget(scopedClassKeys.removeValue(forKey: className))
      }
      if let childRule {
        let parentClass = childRule.parentClass
        if let parent = object.parentId {
          forget(objectKeys.removeValue(forKey: parentClass + "/" + parent))
          forget(idKeys.removeValue(forKey: ObjectIdKey(parent)))
          forget(bookkeepingKeys.removeValue(forKey: parentClass))
        } else {
          forget(objectClassKeys.removeValue(forKey: parentClass))
          forget(unscopedKeys.removeValue(forKey: parentClass))
          forget(scopedClassKeys.removeValue(forKey: parentClass))
        }
      }
      if object.kind != .created {
        for child in rules.children where child.parentClass == className {
          forget(scopeKeys.removeValue(forKey: child.childClass + "/" + object.objectId))
          forget(unscopedKeys.removeValue(forKey: child.childClass))
          forget(idKeys.removeValue(forKey: ObjectIdKey(object.objectId)))
        }
      }
    }

    private mutating func forget(_ keys: [String]?) {
      for key in keys ?? [] {
        if let entry = answers.removeValue(forKey: key) { bytes -= entry.cost }
      }
    }
  }
}

/// The board's keys on an engine without a mark (PostgreSQL), one copy for every connection of
/// a server's pool: read again once `recheck` milliseconds old, so a server reads them at most
/// once an interval, not once per connection (on a busy server: a statement per request).
final class SharedKeys: Sendable {
  private let kept = Mutex<(keys: NCMBSignature.Keys?, readAt: Int64)>((nil, 0))

  func keys(now: Int64, recheck: Int64, _ read: () throws -> NCMBSignature.Keys?) throws
    -> NCMBSignature.Keys?
  {
    let (kept, keptAt) = self.kept.withLock { $0 }
    if let kept, now >= keptAt, now - keptAt < recheck { return kept }
    // Read outside the lock: a slow database never holds up the other connections' requests.
    let read = try read()
    self.kept.withLock {
      if now >= $0.readAt || $0.keys == nil { $0 = (read, now) }
    }
    return read
  }
}
