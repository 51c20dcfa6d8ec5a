#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The rules an engine enforces on every write, declared as data by the layer above (the board)
/// so that Datastore knows nothing of threads and comments. An engine installs them where a
/// client cannot get around them: SQLite as triggers when the file is opened, PostgreSQL as
/// triggers and security-definer functions when `forum init` runs as the database owner.
///
/// Every rule runs inside the caller's transaction: either the write and all its bookkeeping land,
/// or nothing does. Bookkeeping is done by the engine, never through the caller's own write
/// permission on another object (a comment updates its thread's counters although the commenter
/// cannot write the thread).
///
/// Field names are `Validation.isName` names (checked by `validate()`), so engines may put them
/// in SQL text.
public struct EngineRules: Equatable, Sendable {
  public var sequences: [SequenceRule] { didSet { derive() } }
  public var owners: [OwnerRule] { didSet { derive() } }
  public var children: [ChildRule] { didSet { derive() } }
  /// Classes private to two users, one object per pair (`PairRule`).
  public var pairs: [PairRule] { didSet { derive() } }
  /// Classes whose edits keep their earlier revisions (see `RevisionRule`).
  public var revisions: [RevisionRule] = [] { didSet { derive() } }
  /// Classes a role may take down, leaving a tombstone (see `ModerationRule`).
  public var moderation: [ModerationRule] = [] { didSet { derive() } }
  /// Fields only a role and the board's owner set, which listings may put first (`FlagRule`).
  public var flags: [FlagRule] = [] { didSet { derive() } }
  /// Who keeps the board: bans and the board's settings (see `StewardRule`).
  public var stewards: [StewardRule] = [] { didSet { derive() } }

  /// The per-class answers every write and read asks, worked out once when the rules change
  /// (each was a walk of the rules building a set: some 40,000 instructions a comment).
  private struct Derived: Sendable {
    var managed: [String: Set<String>] = [:]
    var counters: [String: Set<String>] = [:]
    var presence: [String: Set<String>] = [:]
  }
  private var derived = Derived()

  public static func == (left: EngineRules, right: EngineRules) -> Bool {
    left.sequences == right.sequences && left.owners == right.owners
      && left.children == right.children && left.pairs == right.pairs
      && left.revisions == right.revisions && left.moderation == right.moderation
      && left.flags == right.flags && left.stewards == right.stewards
  }

  private mutating func derive() {
    var classes = Set(sequences.map(\.className)).union(owners.map(\.className))
    classes.formUnion(children.flatMap { [$0.childClass, $0.parentClass] })
    classes.formUnion(pairs.map(\.className))
    classes.formUnion(revisions.map(\.className))
    classes.formUnion(moderation.map(\.className))
    classes.formUnion(flags.map(\.className))
    var derived = Derived()
    for className in classes {
      derived.managed[className] = managedFieldsWalked(of: className)
      derived.counters[className] = counterFieldsWalked(of: className)
      derived.presence[className] = presenceOrderedWalked(className)
    }
    self.derived = derived
  }

  public init(
    sequences: [SequenceRule] = [], owners: [OwnerRule] = [], children: [ChildRule] = [],
    pairs: [PairRule] = [], revisions: [RevisionRule] = [], moderation: [ModerationRule] = [],
    flags: [FlagRule] = [], stewards: [StewardRule] = []
  ) {
    self.sequences = sequences
    self.owners = owners
    self.children = children
    self.pairs = pairs
    self.revisions = revisions
    self.moderation = moderation
    self.flags = flags
    self.stewards = stewards
    derive()
  }

  /// Fields of `className` that no client sets or changes, on create or update: the engine
  /// writes them. A client that names one gets `E400002 <field> is invalid.` from the API; a
  /// server engine also overwrites or refuses them at the SQL level (psql on PostgreSQL), while on
  /// SQLite raw SQL on the file is outside the trust model. The owner field is among them, but
  /// `create` accepts it when it points at the caller (see `OwnerRule`).
  public func managedFields(of className: String) -> Set<String> {
    derived.managed[className] ?? managedFieldsWalked(of: className)
  }

  private func managedFieldsWalked(of className: String) -> Set<String> {
    Set(WritePlan.keptFields(of: className, in: self).filter { !$0.fixed }.map(\.field))
  }

  /// Fields of `className` a client sets when creating the object and never changes afterwards
  /// (`E400002` on update): a child's parent pointer, a parent's file, a pair's partner.
  public func fixedFields(of className: String) -> Set<String> {
    Set(WritePlan.keptFields(of: className, in: self).filter(\.fixed).map(\.field))
  }

  /// Every field of `className` that a member's update may not change, managed or fixed, in the
  /// order the rules declare them (`WritePlan.keptFields`, the one list, says which and why).
  public func keptFields(of className: String) -> [String] {
    WritePlan.keptFields(of: className, in: self).filter(\.guarded).map(\.field)
  }

  public func owner(of className: String) -> OwnerRule? {
    owners.first { $0.className == className }
  }

  /// The rule under which `className` is a child, if any.
  public func childRule(of className: String) -> ChildRule? {
    children.first { $0.childClass == className }
  }

  public func revisionRule(of className: String) -> RevisionRule? {
    revisions.first { $0.className == className }
  }

  public func moderationRule(of className: String) -> ModerationRule? {
    moderation.first { $0.className == className }
  }

  /// The flag `field` of `className`, if the rules declare one.
  public func flagRule(of className: String, field: String) -> FlagRule? {
    flags.first { $0.className == className && $0.field == field }
  }

  /// The role whose members write nothing (`StewardRule.bannedRole`), if the rules declare one.
  public var bannedRole: String? { stewards.first?.bannedRole }

  /// True when a member of `role:<role>` may grant and revoke `role:<target>` (the owner
  /// always may): the stewards, for the banned role.
  public func keeps(_ target: String, role: String) -> Bool {
    stewards.contains { $0.role == role && $0.bannedRole == target }
  }

  /// The rule that declares the setting `name`, if any.
  public func stewardRule(ofSetting name: String) -> StewardRule? {
    stewards.first { $0.settings.contains(name) }
  }

  /// The fields of `className` a listing orders by presence (a flag set before one not set),
  /// the same on every engine: a flag's value is a date, and absent it is no value at all.
  public func presenceOrdered(_ className: String) -> Set<String> {
    derived.presence[className] ?? presenceOrderedWalked(className)
  }

  private func presenceOrderedWalked(_ className: String) -> Set<String> {
    Set(flags.filter { $0.className == className }.map(\.field))
  }

  /// The rules under which `className` is a parent.
  public func parentRules(of className: String) -> [ChildRule] {
    children.filter { $0.parentClass == className }
  }

  /// A parent's counters (`countField`, `lastNumberField`, `activityField` of each rule under
  /// which `className` is a parent): the fields every child's insert or delete changes.
  public func counterFields(of className: String) -> Set<String> {
    derived.counters[className] ?? counterFieldsWalked(of: className)
  }

  private func counterFieldsWalked(of className: String) -> Set<String> {
    Set(
      parentRules(of: className).flatMap { [$0.countField, $0.lastNumberField, $0.activityField] })
  }

  /// The rules' one encoding as text: `record` as compact JSON with sorted keys. Boards record
  /// it (SQLite in `meta`, PostgreSQL in `forum.meta`) and read the rules back from it.
  public var encoding: String { record.jsonText() }

  /// A hash of the one encoding (SHA-256, hex): equal signatures are the same rules.
  public var signature: String { SHA256.hex(SHA256.hash(encoding)) }

  /// True when no rule is declared.
  public var isEmpty: Bool {
    sequences.isEmpty && owners.isEmpty && children.isEmpty && pairs.isEmpty
      && revisions.isEmpty && moderation.isEmpty && flags.isEmpty && stewards.isEmpty
  }

  /// Refuses rules an engine could not install safely: bad names, a class that is the child of
  /// two parents, a field managed twice.
  public func validate() throws {
    var names: [String] = []
    for rule in sequences { names += [rule.className, rule.field, rule.sequence] }
    for rule in owners {
      names += [rule.className, rule.field]
      for writer in rule.additionalWriters where !ACL.isValidPrincipal(writer) || writer == "*" {
        throw DatastoreError.invalid("rules", "owner rule writer \(writer)")
      }
    }
    for rule in children {
      names += [
        rule.childClass, rule.parentField, rule.parentClass, rule.numberField,
        rule.lastNumberField, rule.countField, rule.activityField,
      ]
      names += rule.fileField.map { [$0] } ?? []
    }
    for rule in pairs {
      names += [rule.className, rule.ownerField, rule.partnerField, rule.pairField]
    }
    for rule in revisions { names += [rule.className, rule.editDateField] + rule.fields }
    for rule in moderation {
      names += [rule.className, rule.markField] + rule.contentFields
      names += rule.fileField.map { [$0] } ?? []
      guard Validation.isRoleName(rule.role) else {
        throw DatastoreError.invalid("rules", "bad role \(rule.role)")
      }
    }
    for rule in flags { names += try rule.validatedNames(in: self) }
    for rule in stewards {
      names += rule.settings
      guard Validation.isRoleName(rule.role), Validation.isRoleName(rule.bannedRole),
        rule.role != rule.bannedRole
      else { throw DatastoreError.invalid("rules", "bad steward roles") }
    }
    guard stewards.count <= 1 else {
      throw DatastoreError.invalid("rules", "a board has one steward rule")
    }
    for name in names where !Validation.isName(name) {
      throw DatastoreError.invalid("rules", "bad name \(name)")
    }
    let childClasses = children.map(\.childClass)
    guard Set(childClasses).count == childClasses.count else {
      throw DatastoreError.invalid("rules", "a class can have one parent")
    }
    let pairClasses = Set(pairs.map(\.className))
    guard pairClasses.count == pairs.count, pairClasses.isDisjoint(with: owners.map(\.className))
    else { throw DatastoreError.invalid("rules", "a pair's class has its own owner rule") }
    guard Set(owners.map(\.className)).count == owners.count,
      Set(sequences.map { "\($0.className).\($0.field)" }).count == sequences.count,
      Set(flags.map { "\($0.className).\($0.field)" }).count == flags.count
    else { throw DatastoreError.invalid("rules", "a field is managed twice") }
  }
}

/// On insert of `className`, `field` is set to the next value of the named sequence (1, 2, 3, …).
/// A value is never handed out twice, not even after a rollback or a delete; a client's own value
/// for the field is refused by the API. Thread.number from `threadNumber`.
public struct SequenceRule: Equatable, Sendable {
  public let className: String
  public let field: String
  public let sequence: String

  public init(className: String, field: String, sequence: String) {
    self.className = className
    self.field = field
    self.sequence = sequence
  }
}

/// Objects of `className` belong to the caller who creates them.
/// - On insert, `field` (a pointer to the `user` class) is set to the caller; naming anyone else
///   is `E403001` (forged authorship). A caller without a user (no session) cannot create them
///   (`E401001`).
/// - The ACL's writers must be the caller plus, optionally, principals in `additionalWriters`
///   (for example `role:moderator`): anything else is `E403001`, on create and on every ACL
///   change. Readers are free (a child's readers follow its parent, see `ChildRule`).
/// - `field` never changes after insert.
public struct OwnerRule: Equatable, Sendable {
  public let className: String
  public let field: String
  public let additionalWriters: Set<String>

  public init(className: String, field: String, additionalWriters: Set<String> = []) {
    self.className = className
    self.field = field
    self.additionalWriters = additionalWriters
  }
}

/// Objects of `childClass` belong to an object of `parentClass` through the pointer `parentField`
/// (Comment.thread -> Thread). The engine does, in the same transaction:
/// - **insert parent**: `countField` := 0, `lastNumberField` := 0, `activityField` := its
///   `createDate`. If `fileField` names a file, that file must exist (`E404001`) and be writable by
///   the caller (`E403001`).
/// - **insert child**: the parent must exist and be readable by the caller, else `E404001`
///   (nothing written); the child's readers := the parent's readers, whatever the caller asked
///   (its writers follow the caller's ACL and the owner rule); the child's `numberField` :=
///   parent's `lastNumberField` + 1; the parent's `lastNumberField` += 1, `countField` += 1,
///   `activityField` := the child's `createDate`. The caller needs no write access to the parent.
/// - **delete child** (by its writer): the parent's `countField` -= 1; numbers are never reused.
/// - **delete parent** (by its writer): its children, and the file named by its `fileField`, are
///   deleted too.
/// - **parent readers change**: the children's readers follow. A child's readers cannot be set
///   apart from its parent's (an ACL given on update keeps the parent's readers).
/// Concurrent children of one parent never share a number and the counters stay exact: the
/// increments are done in SQL under the parent row's lock, never read-modified-written by a client.
public struct ChildRule: Equatable, Sendable {
  public let childClass: String
  public let parentField: String
  public let parentClass: String
  public let numberField: String
  public let lastNumberField: String
  public let countField: String
  public let activityField: String
  public let fileField: String?

  public init(
    childClass: String, parentField: String, parentClass: String, numberField: String,
    lastNumberField: String, countField: String, activityField: String, fileField: String?
  ) {
    self.childClass = childClass
    self.parentField = parentField
    self.parentClass = parentClass
    self.numberField = numberField
    self.lastNumberField = lastNumberField
    self.countField = countField
    self.activityField = activityField
    self.fileField = fileField
  }
}

/// Objects of `className` keep their history: when an update changes any of `fields`, the engine
/// stores the old values as a revision (with the time they were written) and sets
/// `editDateField` to its clock, in the writer's transaction. Revisions are readable by exactly
/// who can read the object, written only by the engine (nobody can rewrite or erase them), and
/// go with the object when it is deleted.
public struct RevisionRule: Equatable, Sendable {
  public let className: String
  public let fields: [String]
  public let editDateField: String

  public init(className: String, fields: [String], editDateField: String) {
    self.className = className
    self.fields = fields
    self.editDateField = editDateField
  }
}

/// Members of `role:<role>` may take down public objects of `className` that are not theirs:
/// `DatastoreClient.moderate` removes `contentFields` (and the file `fileField` names, and every
/// revision) and sets `markField` to the engine's clock, leaving a tombstone. An object not
/// readable by `*` (a conversation) is out of reach (`E404001`, as if it did not exist). A
/// tombstone is never edited again.
public struct ModerationRule: Equatable, Sendable {
  public let className: String
  public let role: String
  public let contentFields: [String]
  public let fileField: String?
  public let markField: String

  public init(
    className: String, role: String, contentFields: [String], fileField: String? = nil,
    markField: String
  ) {
    self.className = className
    self.role = role
    self.contentFields = contentFields
    self.fileField = fileField
    self.markField = markField
  }
}

/// Who keeps the board, besides its owner: members of `role:<role>` (and the owner) grant and
/// revoke `role:<bannedRole>`, and set the board's `settings` (a name to a short text, read by
/// every member). Members of `role:<bannedRole>` write nothing: no object or file is created or
/// changed by them, on any path (the engine refuses with `E403001`); what they wrote stays.
/// Nobody bans the board's owner.
public struct StewardRule: Equatable, Sendable {
  public let role: String
  public let bannedRole: String
  public let settings: [String]

  public init(role: String, bannedRole: String, settings: [String] = []) {
    self.role = role
    self.bannedRole = bannedRole
    self.settings = settings
  }
}
