/// Which engine a `--db` location names.
public enum EngineKind: Equatable, Sendable {
  /// A file path (the default): the embedded SQLite engine.
  case sqlite
  /// A libpq connection URI (`postgresql://…` or `postgres://…`).
  case postgres
  /// An `https://HOST[:PORT]/` URL: a board a `forum serve` holds (`RemoteEngine`).
  case remote

  /// `postgresql://` or `postgres://` (scheme in any case) is PostgreSQL, `https://` a remote
  /// board; anything else is a path.
  public init(location: String) {
    let lowered = location.prefix(13).lowercased()
    if lowered.hasPrefix("https://") {
      self = .remote
    } else {
      self =
        lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") ? .postgres : .sqlite
    }
  }
}

extension Datastore {
  /// Opens the datastore at `location` with the engine it names (see `EngineKind`), ready for
  /// `rules` and `indexes` (`DatastoreEngine.prepare`). The one way Forum and ForumCLI open a
  /// database. An https board opened with `keptKeys` (`Profile.remoteKeys(for:)`) asks its
  /// server nothing until the first command's request. `existing`: a board file that is not
  /// there is an error, never made (a second connection to a board in use).
  public static func open(
    _ location: String, rules: EngineRules = EngineRules(), indexes: [IndexSpec] = [],
    fileSizeLimit: Int = Datastore.defaultFileSizeLimit,
    sessionLifetime: Double = Datastore.defaultSessionLifetime, keptKeys: RemoteBoardKeys? = nil,
    existing: Bool = false
  ) throws -> Datastore {
    try rules.validate()
    let engine: any DatastoreEngine =
      switch EngineKind(location: location) {
      case .remote: try RemoteEngine(url: location, kept: keptKeys)
      case .sqlite where existing: try SQLiteEngine(path: location, existing: true)
      default: try engine(for: location)
      }
    return try Datastore(
      engine: engine, rules: rules, indexes: indexes,
      fileSizeLimit: fileSizeLimit, sessionLifetime: sessionLifetime)
  }

  /// `forum init`: creates or migrates the schema at `location` and installs `rules` and
  /// `indexes` (`DatastoreEngine.install`; on PostgreSQL run as the database owner).
  public static func initialize(
    _ location: String, rules: EngineRules, indexes: [IndexSpec]
  ) throws {
    try rules.validate()
    try engine(for: location).install(rules: rules, indexes: indexes)
  }

  /// `forum index add CLASS FIELD…`: an index on the fields of the class, in that order
  /// (equalities first, then the order), so that an app's query on them seeks instead of
  /// walking the class (`DatastoreEngine.addIndex`). Names are checked: `E400002` otherwise.
  /// `IndexSpec(geoOf:field:)`: the coordinates of one GeoPoint field, which `$within` and
  /// `$nearSphere` with a distance seek.
  public static func addIndex(_ spec: IndexSpec, at location: String) throws {
    let isPath = { (field: String) in
      field.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(Validation.isName)
    }
    guard Validation.isName(spec.className) else { throw DatastoreError.invalid("className") }
    if spec.kind == .geo {
      // One top-level field: an app's GeoPoint (`geo`, `location`).
      guard spec.fields.count == 1, Validation.isName(spec.fields[0]),
        spec.fields[0].utf8.count <= IndexSpec.geoFieldBytes
      else {
        throw DatastoreError.invalid(
          "field", "one GeoPoint field name of at most \(IndexSpec.geoFieldBytes) bytes")
      }
      try engine(for: location).addIndex(spec)
      return
    }
    guard spec.kind == .ordered, (1...4).contains(spec.fields.count), spec.fields.allSatisfy(isPath)
    else { throw DatastoreError.invalid("field", "one to four field names") }
    try engine(for: location).addIndex(spec)
  }

  private static func engine(for location: String) throws -> any DatastoreEngine {
    switch EngineKind(location: location) {
    case .sqlite: return try SQLiteEngine(path: location)
    case .postgres: return try makePostgresEngine(uri: location)
    case .remote: return try RemoteEngine(url: location)
    }
  }
}

extension Datastore {
  /// Refuses an owner's tool (`command`: `init`, `keys`, `index`, `import`) on an https board
  /// before anything is opened or read: it runs where `forum serve` holds the board.
  public static func requireBoardsHost(_ command: String, location: String) throws {
    guard EngineKind(location: location) == .remote else { return }
    let server = RemoteEngine.parse(location)?.1 ?? Wire.printable(location, limit: 200)
    throw DatastoreError(
      .systemError, reason: .access(.ownerToolOverHTTPS(command: command, server: server)))
  }
}
