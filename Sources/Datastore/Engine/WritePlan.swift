/// The rules compiled once into what every write does (issue 20): for each event (a class's
/// insert, update, readers change, delete, and the feed's row), the ordered effects that
/// follow, and for each class the fields a client may not send. Each engine renders this plan in
/// its dialect (`SQLiteRules`, `PostgresRules`) and decides nothing of its own: which effects a
/// child's insert has, or whether a delete counts its parent down, is said here only.
///
/// Each engine walks the effects with an exhaustive `switch` (no `default:`), so a new effect
/// cannot be added without both engines saying how they render it, even when that is "nothing
/// in SQL, the engine's Swift checks it" (SQLite has no guard triggers: README, trust model).
///
/// The plan is a pure function of the rules (`EngineRules.plan`): it has no encoding of its own,
/// and equal rules' signatures (`EngineRules.signature`) are equal plans. What a board records is
/// the rules; a change in how they compile shows in the SQL each engine renders, which SQLite
/// versions (`SQLiteRules.format`) and PostgreSQL fingerprints (`PostgresRules.fingerprint`).
public struct WritePlan: Equatable, Sendable {
  /// One effect, on writes of `className`.
  public struct Step<Effect: Equatable & Sendable>: Equatable, Sendable {
    public let className: String
    public let effect: Effect
  }

  /// Every class a rule names, in the order the rules declare them: sequences, children (each
  /// child, then its parent), owners, pairs, revisions, moderation, flags.
  public private(set) var classes: [String] = []
  /// What an insert does, class by class in `classes` order.
  public private(set) var insert: [Step<InsertEffect>] = []
  /// What an update does: revisions (in the rules' order), then what a member's update keeps.
  public private(set) var update: [Step<UpdateEffect>] = []
  /// What follows when an object's readers change.
  public private(set) var readersChange: [Step<ReadersEffect>] = []
  /// What a delete takes along, rule by rule: a child's parent, then a parent's children.
  public private(set) var delete: [Step<DeleteEffect>] = []
  /// What the change feed records of a row besides its class, id and readers: children's
  /// parents, then children's and sequences' numbers.
  public private(set) var feed: [Step<FeedEffect>] = []
  /// The fields each engine keeps from clients, per class (`KeptField`), in declaration order.
  public private(set) var keptFields: [String: [KeptField]] = [:]

  public init(_ rules: EngineRules) {
    for name in rules.sequences.map(\.className)
      + rules.children.flatMap({ [$0.childClass, $0.parentClass] }) + rules.owners.map(\.className)
      + rules.pairs.map(\.className) + rules.revisions.map(\.className)
      + rules.moderation.map(\.className) + rules.flags.map(\.className)
    where !classes.contains(name) {
      classes.append(name)
    }
    for className in classes {
      keptFields[className] = WritePlan.keptFields(of: className, in: rules)
      insert += WritePlan.insertEffects(of: className, in: rules).map {
        Step(className: className, effect: $0)
      }
    }
    for rule in rules.revisions {
      update.append(
        Step(
          className: rule.className,
          effect: .keepRevision(rule, skipTombstoneOf: rules.moderationRule(of: rule.className))))
    }
    for rule in rules.children {
      update.append(Step(className: rule.childClass, effect: .readersStayTheParents(rule)))
    }
    for rule in rules.owners {
      update.append(Step(className: rule.className, effect: .writersStayTheOwner(rule)))
    }
    for rule in rules.moderation {
      update.append(Step(className: rule.className, effect: .tombstoneIsFinal(rule)))
    }
    for rule in rules.pairs {
      update.append(Step(className: rule.className, effect: .pairKeepsItsACL(rule)))
    }
    for rule in rules.children {
      readersChange.append(Step(className: rule.parentClass, effect: .childrenFollow(rule)))
      delete.append(
        Step(className: rule.childClass, effect: .countParentDown(rule, clampAtZero: true)))
      delete.append(Step(className: rule.parentClass, effect: .deleteChildren(rule)))
      if let file = rule.fileField {
        delete.append(Step(className: rule.parentClass, effect: .deleteFile(rule, field: file)))
      }
      feed.append(Step(className: rule.childClass, effect: .parent(rule)))
    }
    for rule in rules.children {
      feed.append(Step(className: rule.childClass, effect: .number(field: rule.numberField)))
    }
    for rule in rules.sequences {
      feed.append(Step(className: rule.className, effect: .number(field: rule.field)))
    }
  }

  /// The effects of inserting an object of `className`, in the order they are rendered: what
  /// the class sets itself (its sequence, author, pair), then what it starts as a parent, then
  /// what it takes from its parent. SQLite's insert reads them for its one class (`newRow`).
  static func insertEffects(of className: String, in rules: EngineRules) -> [InsertEffect] {
    var effects: [InsertEffect] = []
    for rule in rules.sequences where rule.className == className {
      effects.append(.nextInSequence(rule))
    }
    if let rule = rules.owner(of: className) { effects.append(.ownedByCaller(rule)) }
    if let rule = rules.pairRule(of: className) { effects.append(.pairOfCaller(rule)) }
    for rule in rules.parentRules(of: className) {
      if let file = rule.fileField { effects.append(.parentFileWritable(rule, field: file)) }
      effects.append(.startParentCounters(rule))
    }
    if let rule = rules.childRule(of: className) {
      effects.append(.requireReadableParent(rule))
      effects += rules.flags.compactMap { $0.insertEffect(ofChild: rule) }
      effects += [
        .inheritParentReaders(rule), .numberFromParent(rule), .countParentUp(rule),
        .touchParentActivity(rule),
      ]
    }
    return effects
  }

  /// The one list of what each rule keeps from clients (see `KeptField`), in declaration order
  /// (PostgreSQL's guard keeps them in this order; its generated SQL, and so every board's
  /// recorded fingerprint, follows it). `EngineRules.managedFields` and the rest read it.
  static func keptFields(of className: String, in rules: EngineRules) -> [KeptField] {
    var fields: [KeptField] = []
    func add(_ field: String, fixed: Bool = false, guarded: Bool = true) {
      fields.append(KeptField(field: field, fixed: fixed, guarded: guarded))
    }
    for rule in rules.revisions where rule.className == className { add(rule.editDateField) }
    for rule in rules.moderation where rule.className == className { add(rule.markField) }
    for rule in rules.flags where rule.className == className { add(rule.field) }
    for rule in rules.sequences where rule.className == className { add(rule.field) }
    for rule in rules.owners where rule.className == className { add(rule.field) }
    for rule in rules.pairs where rule.className == className {
      add(rule.ownerField)
      add(rule.pairField)
      add(rule.partnerField, fixed: true)
    }
    for rule in rules.children {
      if rule.childClass == className {
        add(rule.numberField)
        add(rule.parentField, fixed: true)
      }
      if rule.parentClass == className {
        add(rule.countField)
        add(rule.lastNumberField)
        add(rule.activityField)
        if let file = rule.fileField { add(file, fixed: true, guarded: false) }
      }
    }
    return fields
  }

  /// The insert effects of `className`, in order.
  public func insert(of className: String) -> [InsertEffect] {
    insert.filter { $0.className == className }.map(\.effect)
  }

  /// The update effects of `className`, in order.
  public func update(of className: String) -> [UpdateEffect] {
    update.filter { $0.className == className }.map(\.effect)
  }

  /// What follows when the readers of an object of `className` change.
  public func readersChange(of className: String) -> [ReadersEffect] {
    readersChange.filter { $0.className == className }.map(\.effect)
  }

  /// What deleting an object of `className` takes along, in order.
  public func delete(of className: String) -> [DeleteEffect] {
    delete.filter { $0.className == className }.map(\.effect)
  }

  /// The fields of `className` the engine keeps from clients.
  public func kept(of className: String) -> [KeptField] { keptFields[className] ?? [] }
}

/// A field a rule keeps from clients. Not `fixed`: the engine writes it (managed), and a client
/// that names it on create or update gets `E400002` (the owner field excepted on create, when
/// it points at the caller). `fixed`: the client sets it on create and never changes it (a
/// child's parent, a parent's file, a pair's partner). `guarded`: PostgreSQL's guard restores it
/// on a member's update; a parent's file is fixed but not among them, the guard appending it
/// after the rest (the cascade reads it, nothing else).
public struct KeptField: Equatable, Sendable {
  public let field: String
  public let fixed: Bool
  public let guarded: Bool
}

/// What follows the insert of an object.
public enum InsertEffect: Equatable, Sendable {
  /// The rule's field := the sequence's next value, never handed out twice.
  case nextInSequence(SequenceRule)
  /// The author is the caller (a caller without a user cannot insert) and the writers are the
  /// caller plus the rule's extra writers.
  case ownedByCaller(OwnerRule)
  /// The pair's owner := the caller, its partner an existing other user, its key, its ACL
  /// (the two read, nobody writes), one object per pair.
  case pairOfCaller(PairRule)
  /// A new parent's file, when it names one, exists and is writable by the caller.
  case parentFileWritable(ChildRule, field: String)
  /// A new parent: no children yet (count and last number 0), active at its creation.
  case startParentCounters(ChildRule)
  /// A child's parent exists and is readable by the caller, else `E404001`; the child's pointer
  /// to it is written canonical.
  case requireReadableParent(ChildRule)
  /// While the parent carries the lock's flag, no child is inserted, whoever asks (`E403001`,
  /// `StoreReason.parentLocked`); read under the parent row's lock, as the counters are.
  case refuseWhileParentLocked(ChildRule, FlagRule)
  /// A child's readers := its parent's, whatever the caller asked.
  case inheritParentReaders(ChildRule)
  /// A child's number := the parent's last number + 1, which becomes the parent's last number
  /// (under the parent row's lock, so that concurrent children never share one).
  case numberFromParent(ChildRule)
  /// The parent's count of children += 1.
  case countParentUp(ChildRule)
  /// The parent's last activity := the child's creation.
  case touchParentActivity(ChildRule)
}

/// What an update does, or keeps from a member's update.
public enum UpdateEffect: Equatable, Sendable {
  /// An update changing a revisioned field keeps the old values as a revision and dates the
  /// edit; an update that makes a tombstone of the object (the moderation rule's mark) is no
  /// edit.
  case keepRevision(RevisionRule, skipTombstoneOf: ModerationRule?)
  /// A child's readers stay its parent's (an ACL given on update keeps them).
  case readersStayTheParents(ChildRule)
  /// An owned object's writers stay its author (plus the rule's extra writers).
  case writersStayTheOwner(OwnerRule)
  /// A tombstone is never edited again.
  case tombstoneIsFinal(ModerationRule)
  /// A pair's readers and writers never change.
  case pairKeepsItsACL(PairRule)
}

/// What follows a change of an object's readers.
public enum ReadersEffect: Equatable, Sendable {
  /// The parent's children take its new readers.
  case childrenFollow(ChildRule)
}

/// What a delete takes along.
public enum DeleteEffect: Equatable, Sendable {
  /// A child counts its parent down (never below zero when clamped); numbers are not reused.
  case countParentDown(ChildRule, clampAtZero: Bool)
  /// A parent's children go with it.
  case deleteChildren(ChildRule)
  /// The file a parent names goes with it.
  case deleteFile(ChildRule, field: String)
}

/// What the change feed records of a row of the class.
public enum FeedEffect: Equatable, Sendable {
  /// A child's row names its parent (its pointer's id).
  case parent(ChildRule)
  /// A deleted row records its number, from `field`.
  case number(field: String)
}

extension EngineRules {
  /// The rules compiled (`WritePlan`): what each engine renders.
  public var plan: WritePlan { WritePlan(self) }
}
