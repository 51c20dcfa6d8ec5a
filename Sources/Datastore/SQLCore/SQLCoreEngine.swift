/// What the core needs of an engine to run a statement it wrote: the dialect to render it in,
/// the rows it answers, each decoded by name, and the few things the two engines say
/// differently. Errors come out as the engine's own (`DatastoreError` with its codes).
protocol SQLCoreEngine: AnyObject {
  static var dialect: SQLDialect { get }
  var rules: EngineRules { get }

  /// Runs `statement` and decodes each row it answers.
  func rows<T>(_ statement: SQL, _ decode: (any SQLRow) throws -> T) throws -> [T]

  /// Makes the connection act for `caller` before a read (PostgreSQL: its role and
  /// principals; SQLite takes the caller from each statement's ACL test and does nothing).
  func act(as caller: Principals) throws

  /// The principals of a stored `readers` or `writers` column as the engine keeps them.
  static func principals(ofColumn text: String?) -> Set<String>

  /// ACLs read from their columns, kept by their text (`storedACL`).
  var aclCache: ACLCache { get set }
}

extension SQLCoreEngine {
  /// The ACL of a row, from its stored `readers` and `writers` columns.
  func storedACL(readers: String?, writers: String?) -> ACL {
    aclCache.acl(readers: readers, writers: writers, Self.principals(ofColumn:)).acl
  }

  /// `storedACL` with its JSON text, as `ObjectShape` writes it.
  func writtenACL(readers: String?, writers: String?) -> (acl: ACL, json: [UInt8]) {
    aclCache.acl(readers: readers, writers: writers, Self.principals(ofColumn:))
  }

  /// The first row decoded, or nil when the statement answers none.
  func firstRow<T>(_ statement: SQL, _ decode: (any SQLRow) throws -> T) throws -> T? {
    try rows(statement, decode).first
  }
}

extension SQLDialect {
  /// A whole number the statement compares or limits by, bound (PostgreSQL gets it typed:
  /// its parameters arrive as text).
  func bigint(_ number: Int64) -> SQL {
    switch self {
    case .sqlite: return "\(number)"
    case .postgres: return "\(number)::bigint"
    }
  }

  func bigint(_ number: Int) -> SQL { bigint(Int64(number)) }
}
