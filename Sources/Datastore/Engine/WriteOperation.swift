/// One write of an application (a thread with its image and its read mark, a comment with its
/// caught-up mark, a delete or take-down, an edit, a preference), said as a value: the steps it
/// takes, each naming what earlier steps found or made. The engine runs it whole
/// (`DatastoreEngine.perform`): in one transaction of its own (SQLite, PostgreSQL), or, for an
/// engine across the network, as one request. Nothing of it is kept when a step fails, and
/// every date in it is the engine's (`Operand.now`), never the client's. A caller cannot open a
/// transaction over the engine: this is the only way to make several writes one.
///
/// The checks a step makes are the rules' (`OwnerRule`, `ModerationRule`, `ChildRule`), applied
/// by the same code for every engine (`DatastoreClient.run(_:)`), and the engine enforces them
/// again in each statement.
public struct WriteOperation: Equatable, Sendable {
  public var steps: [WriteStep]

  public init(_ steps: [WriteStep]) {
    self.steps = steps
  }
}

/// A value in a step: given, or known only when the operation runs.
public enum Operand: Equatable, Sendable {
  case value(JSONValue)
  /// A pointer to the caller's user.
  case caller
  /// A pointer to the object step `n` found or made (the first, for `findAll`).
  case pointer(toStep: Int)
  /// A field of the object step `n` found or made; absent: the step fails `E400002`.
  case field(String, ofStep: Int)
  /// The engine's clock, in milliseconds, read once per operation.
  case now
}

/// One step of a `WriteOperation`. A step names an earlier one by its index.
public enum WriteStep: Equatable, Sendable {
  /// The one object of `className` whose fields equal `equalTo` and the caller may read; none
  /// is `E404001`.
  case find(className: String, equalTo: [String: Operand])
  /// Every object of `className` whose fields equal `equalTo` and the caller may read (up to
  /// `Query.maximumLimit`); none is no failure.
  case findAll(className: String, equalTo: [String: Operand])
  /// Ends the operation here, having written nothing more, when an object step `step` found
  /// has `field` equal to `value` (`WriteOutcome.stoppedAt`).
  case stopIf(step: Int, field: String, equals: JSONValue)
  /// Stores a file (`DatastoreClient.putFile`).
  case putFile(name: String, bytes: [UInt8], mimeType: String, acl: ACL)
  /// Creates an object (`DatastoreClient.create`), the rules applied.
  case create(className: String, fields: [String: Operand], acl: ACL)
  /// Sets fields of the object step `step` found or made (`.null` removes one) and reads it back
  /// whole, the rules' bookkeeping (an edit date, a revision) included.
  case update(step: Int, set: [String: Operand])
  /// The first object step `step` found gets `set` and the others are deleted; when it found
  /// none, one is created with `create` and `set` (the caller's own record of something).
  case keepOne(
    step: Int, className: String, set: [String: Operand], create: [String: Operand], acl: ACL)
  /// Deletes every object step `step` found whose fields hold one of the values given for
  /// them (no condition: all of them).
  case deleteFound(step: Int, whereIn: [String: [JSONValue]])
  /// Fails unless the object step `step` found may be edited by the caller: not taken down
  /// (its `ModerationRule`'s mark is absent: else `E404001`) and the caller's own (its
  /// `OwnerRule`'s field names the caller: else `E403001`).
  case requireEditable(step: Int)
  /// Removes the object step `step` found: deleted when it is the caller's own (`OwnerRule`),
  /// taken down, leaving a tombstone, when the caller is of the class's `ModerationRule` role
  /// and the object is public; anyone else `E403001`. Taken down already: `E404001`.
  case remove(step: Int)
  /// The caller's read position in the parent step `step` found or made moves up to `upTo`.
  case markRead(step: Int, upTo: Int64)
  /// The caller, who had read the parent `parentStep` up to the child `childStep` made, now
  /// has read that child too (`DatastoreClient.advanceRead`); any other position stays.
  case advanceRead(parentStep: Int, childStep: Int)
}

/// What a `WriteOperation` found and made, step by step.
public struct WriteOutcome: Equatable, Sendable {
  public enum Result: Equatable, Sendable {
    case none
    case objects([DataObject])
    case file(FileInfo)
    case removed(Removal)
  }

  /// How `WriteStep.remove` removed an object.
  public enum Removal: Equatable, Sendable {
    case deleted
    case takenDown
  }

  /// One result per step that ran.
  public var results: [Result]
  /// The `stopIf` step that ended the operation early, if any.
  public var stoppedAt: Int?

  public init(results: [Result] = [], stoppedAt: Int? = nil) {
    self.results = results
    self.stoppedAt = stoppedAt
  }

  /// The objects step `step` found or made (none for a step that did not run or made none).
  public func objects(_ step: Int) -> [DataObject] {
    guard results.indices.contains(step), case .objects(let objects) = results[step] else {
      return []
    }
    return objects
  }

  /// The first object step `step` found or made.
  public func object(_ step: Int) -> DataObject? { objects(step).first }

  /// How step `step` removed its object.
  public func removal(_ step: Int) -> Removal? {
    guard results.indices.contains(step), case .removed(let removal) = results[step] else {
      return nil
    }
    return removal
  }
}

/// A `WriteOperation` that failed: which step, and why (a `DatastoreError`). Nothing of the
/// operation was kept.
public struct WriteOperationError: Error, CustomStringConvertible {
  public let step: Int
  public let error: Error

  public init(step: Int, error: Error) {
    self.step = step
    self.error = error
  }

  public var description: String { "step \(step): \(error)" }
}
