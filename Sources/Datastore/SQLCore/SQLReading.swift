/// What both SQL engines keep for readers beside the objects, written once: the parent's child
/// rule, the caller's read positions decoded by name, and an object's kept revisions. Each
/// engine says where they are read from (SQLite: its tables through the caller's ACL;
/// PostgreSQL: the server's functions, which find the caller's own rows).
protocol SQLReading: SQLCoreEngine {
  func get(_ className: String, objectId: String, as caller: Principals) throws -> DataObject

  /// How many revisions of the object are kept and the number of the latest, as the columns
  /// `total` and `last`.
  func revisionTotals(_ className: String, objectId: String) -> SQL

  /// A page of the object's kept revisions, oldest first, as the columns `date`, `data` (the
  /// fields' JSON text) and `number`.
  func revisionPage(_ className: String, objectId: String, skip: Int, limit: Int) -> SQL
}

extension SQLReading {
  /// The rule of the children `parentClass` numbers (`E105001` when it has none).
  func childRule(of parentClass: String) throws -> ChildRule {
    guard let rule = rules.parentRules(of: parentClass).first else {
      throw DatastoreError.invalid("className", "\(parentClass) has no children")
    }
    return rule
  }

  func revisions(
    _ className: String, objectId: String, skip: Int, limit: Int, as caller: Principals
  ) throws -> RevisionPage {
    _ = try get(className, objectId: objectId, as: caller)  // readable, or E404001
    let (count, last) =
      try firstRow(revisionTotals(className, objectId: objectId)) {
        (Int($0.int("total")), Int($0.int("last")))
      } ?? (0, 0)
    let page = revisionPage(className, objectId: objectId, skip: skip, limit: limit)
    let revisions = try rows(page) { row in
      // A revision written by hand that cannot be read shows as one with no fields.
      Revision(
        number: Int(row.int("number")), date: row.int("date"),
        fields: JSONValue.storedFields(row.text("data") ?? "{}").fields)
    }
    return RevisionPage(revisions: revisions, count: count, lastNumber: last)
  }
}

extension UnreadState {
  /// A row answering where the caller stands in a parent: `position` (NULL: never opened) and
  /// `unread`, the children after it already counted.
  init(row: any SQLRow) {
    self.init(position: row.optionalInt("position"), unreadChildren: Int(row.int("unread")))
  }
}
