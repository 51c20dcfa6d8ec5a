/// Reading files, once for both SQL engines: one file by name, its bytes, and a search over
/// the files seen as objects, so that a file search renders its conditions and order with the
/// object query's code (`QuerySQL`). Each engine says where the files the caller may read are
/// (SQLite: `files` through the caller's ACL; PostgreSQL: the public table and the caller's own
/// private files); writing a file stays each engine's own (PostgreSQL's server functions move
/// a file between its tables).
protocol SQLFiles: SQLCoreEngine {
  associatedtype Leaves: QueryLeaves
  /// How the object query's conditions and order are written in this dialect.
  static var leaves: Leaves { get }

  /// What each name `fileInfo(row:)` reads is stored as (a column, or a column cast to text),
  /// by name: `file_name`, `mime_type`, `file_size`, `create_date`, `update_date`, `readers`,
  /// `writers`.
  static var storedFileColumns: KeyValuePairs<String, String> { get }

  /// The files as objects (`o.` with the object columns, the dates, `o.data` holding the
  /// metadata as `fileName`, `mimeType`, `fileSize`).
  static var filesAsObjects: SQL { get }

  /// A file search's `WHERE` over `filesAsObjects`: what the caller may read and the
  /// query's conditions.
  static func fileSearchWhere(_ query: Query, _ caller: Principals) -> SQL

  /// `columns` of the file named `name` if the caller may read it (at most one row).
  func readableFile(_ name: String, _ caller: Principals, columns: SQL) -> SQL
}

extension SQLFiles {
  /// The file's metadata read from `table` (nil: unqualified, for `RETURNING`), each named as
  /// `fileInfo(row:)` reads it.
  static func fileColumns(_ table: String?) -> SQL {
    let prefix = table.map { $0 + "." } ?? ""
    let columns = storedFileColumns.map { prefix + $0.value + " AS " + $0.key }
    return SQL(verbatim: columns.joined(separator: ", "))
  }

  /// A row of `fileColumns`.
  func fileInfo(row: any SQLRow) -> FileInfo {
    FileInfo(
      fileName: row.text("file_name") ?? "", mimeType: row.text("mime_type") ?? "",
      fileSize: Int(row.int("file_size")), createDate: row.int("create_date"),
      updateDate: row.int("update_date"),
      acl: storedACL(readers: row.text("readers"), writers: row.text("writers")))
  }

  func fileInfo(name: String, as caller: Principals) throws -> FileInfo {
    try act(as: caller)
    let statement = readableFile(name, caller, columns: Self.fileColumns("f"))
    guard let info = try firstRow(statement, fileInfo(row:)) else { throw DatastoreError.notFound }
    return info
  }

  func fileBytes(name: String, as caller: Principals) throws -> [UInt8] {
    try act(as: caller)
    let found = try rows(readableFile(name, caller, columns: "f.data AS data")) { $0.bytes("data") }
    guard found.count == 1, let bytes = found[0] else { throw DatastoreError.notFound }
    return bytes
  }

  /// The SELECT that `findFiles` runs.
  static func filesStatement(_ query: Query, readableBy caller: Principals) -> SQL {
    """
    SELECT \(sql: fileColumns("o")) FROM \(sql: filesAsObjects) \
    \(sql: fileSearchWhere(query, caller))
    \(sql: QuerySQL.order(query.order, leaves)) \
    LIMIT \(sql: dialect.bigint(query.limit)) OFFSET \(sql: dialect.bigint(query.skip))
    """
  }

  func findFiles(_ query: Query, as caller: Principals) throws -> [FileInfo] {
    try act(as: caller)
    return try rows(Self.filesStatement(query, readableBy: caller), fileInfo(row:))
  }

  /// Why a write to a file touched nothing: `E403001` if the caller can read it.
  func fileRefusal(_ name: String, _ caller: Principals) throws -> DatastoreError {
    let readable = try rows(readableFile(name, caller, columns: "1 AS one")) { _ in true }
    return readable.isEmpty ? DatastoreError.notFound : DatastoreError.noAccess
  }

  func countFiles(_ query: Query, as caller: Principals) throws -> Int {
    try act(as: caller)
    let statement: SQL = """
      SELECT count(*) AS count FROM \(sql: Self.filesAsObjects) \
      \(sql: Self.fileSearchWhere(query, caller))
      """
    return Int(try firstRow(statement) { $0.int("count") } ?? 0)
  }
}
