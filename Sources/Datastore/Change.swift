/// One entry of the change feed: an object of some class was created, updated or deleted. The
/// engine writes these itself (triggers), in the writer's transaction, so nothing a client does
/// can add, hide or reorder them. A reader learns ids, never content: it reads the objects again
/// through the ACL.
public struct Change: Equatable, Sendable {
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

  public init(changes: [Change], next: Int64, hasMore: Bool) {
    self.changes = changes
    self.next = next
    self.hasMore = hasMore
  }
}
