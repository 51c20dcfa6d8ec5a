/// Finding objects, once for both SQL engines: `get`, `find`, `count` and `fetch` act for the
/// caller, run the engine's statement and decode its rows by name (`StoredObject`). Each engine
/// says which rows the caller may read and how its plan reaches them (SQLite: the public rows'
/// indexes and `object_readers`; PostgreSQL: `forum.objects` and the caller's own private rows
/// under row-level security); the query's terms are written once (`QuerySQL.fieldTerms`).
protocol SQLFinding: SQLCoreEngine {
  /// An object's columns, aliased to `StoredObject`'s names.
  static var objectColumns: SQL { get }

  /// The object `objectId` of `className` as `columns`, if the caller may read it (one row).
  func readableObject(_ className: String, _ objectId: String, _ caller: Principals, columns: SQL)
    -> SQL

  /// The objects among `objectIds`, of any class, that the caller may read.
  func readableObjects(_ objectIds: [String], _ caller: Principals) -> SQL

  /// The page of `query` the caller may read, as the object columns.
  func findStatement(_ query: Query, _ caller: Principals) -> SQL

  /// How many objects `query` matches among those the caller may read, as the first column.
  func countStatement(_ query: Query, _ caller: Principals) throws -> SQL

  /// The rows `statement` selects, each weighed by `reading` as it is read, so that an answer
  /// past its budget fails before it is built (PostgreSQL: before the rest is sent).
  func storedObjects(reading statement: SQL, _ reading: ObjectReading) throws -> [StoredObject]
}

extension SQLFinding {
  func storedObjects(reading statement: SQL, _ reading: ObjectReading) throws -> [StoredObject] {
    try rows(statement, StoredObject.reader(weighedBy: reading))
  }

  func objects(reading statement: SQL, _ reading: ObjectReading) throws -> [DataObject] {
    try storedObjects(reading: statement, reading).map { object($0, reading: reading) }
  }

  func get(_ className: String, objectId: String, as caller: Principals) throws -> DataObject {
    try act(as: caller)
    let statement = readableObject(className, objectId, caller, columns: Self.objectColumns)
    guard let object = try objects(statement).first else { throw DatastoreError.notFound }
    return object
  }

  func find(_ query: Query, as caller: Principals) throws -> [DataObject] {
    try act(as: caller)
    let reading = ObjectReading(keys: query.keys, budget: query.costBudget)
    return try objects(reading: findStatement(query, caller), reading)
  }

  func find(
    _ query: Query, as caller: Principals, writing shape: ObjectShape, to out: inout [UInt8]
  ) throws -> [String] {
    try act(as: caller)
    let reading = ObjectReading(keys: query.keys, budget: query.costBudget)
    let rows = try storedObjects(reading: findStatement(query, caller), reading)
    return write(rows, reading: reading, as: shape, to: &out)
  }

  func get(
    _ className: String, objectId: String, as caller: Principals, writing shape: ObjectShape,
    to out: inout [UInt8]
  ) throws {
    try act(as: caller)
    let statement = readableObject(className, objectId, caller, columns: Self.objectColumns)
    guard let row = try firstRow(statement, StoredObject.init(row:)) else {
      throw DatastoreError.notFound
    }
    _ = write([row], reading: nil, as: shape, to: &out)
  }

  func count(_ query: Query, as caller: Principals) throws -> Int {
    try act(as: caller)
    return Int(try firstRow(countStatement(query, caller)) { $0.int(at: 0) } ?? 0)
  }

  func fetch(objectIds: [String], keys: Set<String>?, budget: Int?, as caller: Principals)
    throws -> [DataObject]
  {
    try act(as: caller)
    guard !objectIds.isEmpty else { return [] }
    let reading = ObjectReading(keys: keys, budget: budget)
    return try objects(reading: readableObjects(objectIds, caller), reading)
  }
}

/// How an engine spells the terms of a query's own fields, beside the leaves of its conditions.
protocol QueryTerms: QueryLeaves {
  /// The field equals `value` (`Query.equalTo`), on what the listings' indexes hold.
  func equalTo(_ field: String, _ value: JSONValue) -> SQL
  /// The field's number past a whole-number bound (`Query.greaterThan`, `lessThan`: keyset
  /// paging seeks the ordered field's index there); `comparison` is ` > ` or ` < `.
  func bound(_ field: String, _ comparison: String, _ value: Int64) -> SQL
  /// Beside an app's typed `where` equality, which no index serves, the same equality on what
  /// the field's index holds (the typed term still decides); nil when none would serve.
  func seekTerm(_ field: String, _ value: JSONValue) -> SQL?
}

extension QuerySQL {
  /// The query's equalities, its bounds, the seek terms of its equalities, then its conditions.
  static func fieldTerms(_ query: Query, _ terms: some QueryTerms) -> [SQL] {
    var all = query.equalTo.keys.sorted().map { terms.equalTo($0, query.equalTo[$0]!) }
    for field in query.greaterThan.keys.sorted() {
      all.append(terms.bound(field, " > ", query.greaterThan[field]!))
    }
    for field in query.lessThan.keys.sorted() {
      all.append(terms.bound(field, " < ", query.lessThan[field]!))
    }
    let seeks = query.conditions.compactMap { condition -> SQL? in
      guard case .equal(let field, let value) = condition else { return nil }
      return terms.seekTerm(field, value)
    }
    return all + seeks + query.conditions.map { QuerySQL.condition($0, terms) }
  }
}
