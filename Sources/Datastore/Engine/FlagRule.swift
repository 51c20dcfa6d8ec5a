// The flag rule in one place: what it is, how it is recorded, what makes it valid, and what it
// adds to the plan (`WritePlan`), which both engines render (`SQLiteRules`, `PostgresRules`).

/// A field of `className` that only members of `role:<role>` and the board's owner set or
/// clear, with `DatastoreClient.setFlag` (a moderator pins a thread): set, it holds the
/// engine's clock; cleared, the object has no such field. No other write sets or changes it (it
/// is managed: the API refuses it, PostgreSQL's guard keeps it from a member with psql). Only
/// public objects (readable by `*`) are flagged. A listing ordered by the field (`-field`)
/// puts the flagged objects first on every engine (`presenceOrdered`), and an index on it
/// (`IndexSpec`) is an index on that presence.
///
/// `locksChildren`: while the flag is set, the object takes no new children (a locked thread,
/// no new comments): the engine refuses the child's insert, whoever asks and by whatever path,
/// `E403001` with `StoreReason.parentLocked`, checked under the parent row's lock so that a
/// child racing the flag lands before it or not at all.
public struct FlagRule: Equatable, Sendable {
  public let className: String
  public let field: String
  public let role: String
  public let locksChildren: Bool

  public init(className: String, field: String, role: String, locksChildren: Bool = false) {
    self.className = className
    self.field = field
    self.role = role
    self.locksChildren = locksChildren
  }
}

extension FlagRule {
  /// The names it declares (checked as the rules' names are), or why it is no rule.
  func validatedNames(in rules: EngineRules) throws -> [String] {
    guard Validation.isRoleName(role) else {
      throw DatastoreError.invalid("rules", "bad role \(role)")
    }
    guard !locksChildren || !rules.parentRules(of: className).isEmpty else {
      throw DatastoreError.invalid("rules", "a lock on \(className), which has no children")
    }
    return [className, field]
  }

  /// What it adds to the insert of `child`, a child of its class: a lock refuses it while set.
  func insertEffect(ofChild child: ChildRule) -> InsertEffect? {
    className == child.parentClass && locksChildren
      ? .refuseWhileParentLocked(child, self) : nil
  }
}

extension FlagRule {
  // A flag that locks nothing is recorded as before the lock (the pin's record stays).
  var record: JSONValue {
    recordObject([
      "className": .string(className), "field": .string(field), "role": .string(role),
      "locksChildren": locksChildren ? .bool(true) : nil,
    ])
  }

  init(record: JSONValue) throws {
    let r = RecordReader(record)
    self.init(
      className: try r.text("className"), field: try r.text("field"), role: try r.text("role"),
      locksChildren: r.members["locksChildren"] == .bool(true))
  }
}
