/// One entry of the change feed: an object of some class was created, updated or deleted. The
/// engine writes these itself (triggers), in the writer's transaction, so nothing a client does
/// can add, hide or reorder them. A reader learns ids, never content: it reads the objects again
/// through the ACL.
public struct Change: Equatable, Sendable {
  /// How many changes the feed keeps at most, the newest. When a new one would pass it, the
  /// oldest `pruneBatch` and more go at once, by a range of the sequence (so the feed holds
  /// between `window - pruneBatch` and `window`, and a write pays for a prune once in a batch).
  public static let window: Int64 = 50_000
  public static let pruneBatch: Int64 = 1_000

  public enum Kind: Int, Sendable {
    case created = 1
    case updated = 2
    case deleted = 3
  }

  /// Increases in commit order across the whole database; a reader keeps the last one it read.
  public let sequence: Int64
  public let className: String
  public let objectId: String
  public let kind: Kind
  /// For a child of a `ChildRule` (a comment): its parent's objectId.
  public let parentId: String?
  /// For a deletion: the object's number under the rules (a child's `numberField`, or the field a
  /// `SequenceRule` numbers), so a reader can say what went without reading it.
  public let number: Int64?

  public init(
    sequence: Int64, className: String, objectId: String, kind: Kind, parentId: String? = nil,
    number: Int64? = nil
  ) {
    self.sequence = sequence
    self.className = className
    self.objectId = objectId
    self.kind = kind
    self.parentId = parentId
    self.number = number
  }
}

/// What `changes(since:)` found: the changes the caller may read, oldest first, and where to go on.
public struct ChangeBatch: Equatable, Sendable {
  public var changes: [Change]
  /// The `since` of the next read. It moves past changes the caller may not read as well, so a
  /// reader never walks them again.
  public var next: Int64
  /// The batch is full: read again at once for the rest.
  public var hasMore: Bool
  /// Changes after `since` were pruned (the feed keeps the newest `Change.window`): what the
  /// reader knew may be stale, so it must read again what it shows; `changes` start at the
  /// oldest kept. Engines record the last sequence number they pruned, so this is exact.
  public var missed: Bool

  public init(changes: [Change], next: Int64, hasMore: Bool, missed: Bool = false) {
    self.changes = changes
    self.next = next
    self.hasMore = hasMore
    self.missed = missed
  }
}
