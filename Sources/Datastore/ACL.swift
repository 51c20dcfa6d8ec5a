/// An allow-list: who may read and who may write. Principals are `*`, a user's objectId, or
/// `role:<name>`. Only granted flags are stored.
public struct ACL: Equatable, Sendable {
  public private(set) var readers: Set<String>
  public private(set) var writers: Set<String>

  public init(readers: Set<String> = [], writers: Set<String> = []) {
    self.readers = readers
    self.writers = writers
  }

  /// What the backend gives an object created without an ACL: anyone may read and write.
  public static let publicReadWrite = ACL(readers: ["*"], writers: ["*"])

  /// What the board gives every post: anyone reads, only its author writes.
  public static func publicRead(owner userId: String) -> ACL {
    ACL(readers: ["*", userId], writers: [userId])
  }

  public mutating func grant(read: Bool = false, write: Bool = false, to principal: String) {
    if read { readers.insert(principal) }
    if write { writers.insert(principal) }
  }

  public func allowsRead(_ principals: Principals) -> Bool {
    principals.isMaster || !readers.isDisjoint(with: principals.names)
  }

  public func allowsWrite(_ principals: Principals) -> Bool {
    principals.isMaster || !writers.isDisjoint(with: principals.names)
  }

  /// The backend's JSON shape: `{"*":{"read":true},"<id>":{"read":true,"write":true}}`.
  public var json: JSONValue {
    var entries: [String: JSONValue] = [:]
    for principal in readers.union(writers) {
      var flags: [String: JSONValue] = [:]
      if readers.contains(principal) { flags["read"] = .bool(true) }
      if writers.contains(principal) { flags["write"] = .bool(true) }
      entries[principal] = .object(flags)
    }
    return .object(entries)
  }

  /// Reads the backend's JSON shape; anything but `true` flags on valid principals is refused.
  public init(json: JSONValue) throws {
    guard case .object(let entries) = json else { throw DatastoreError.invalid("acl") }
    var acl = ACL()
    for (principal, flags) in entries {
      guard ACL.isValidPrincipal(principal), case .object(let flags) = flags else {
        throw DatastoreError.invalid("acl", "bad principal \(principal)")
      }
      for (flag, value) in flags {
        guard flag == "read" || flag == "write", case .bool(let granted) = value else {
          throw DatastoreError.invalid("acl", "bad flag \(flag)")
        }
        if granted { acl.grant(read: flag == "read", write: flag == "write", to: principal) }
      }
    }
    self = acl
  }

  static func isValidPrincipal(_ principal: String) -> Bool {
    if principal == "*" { return true }
    if principal.hasPrefix("role:") { return Validation.isRoleName(principal.dropFirst(5)) }
    return Validation.isObjectId(principal)
  }

  /// Space-delimited form kept in the database so a query can test membership without parsing.
  static func column(_ principals: Set<String>) -> String {
    " " + principals.sorted().joined(separator: " ") + " "
  }

  static func parseColumn(_ text: String) -> Set<String> {
    // Split the bytes, not the Characters: principals are ASCII and this runs for every row read.
    Set(text.utf8.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) })
  }
}

/// Who is asking: `*`, the signed-in user's objectId, and `role:<name>` for each of their roles.
/// The master principal (the backend's master key) passes every ACL.
public struct Principals: Equatable, Sendable {
  public let userId: String?
  public let names: Set<String>
  public let isMaster: Bool
  /// The SHA-256 of the session token, for an engine whose server acts for many users over one
  /// connection (PostgreSQL under `forum serve`: `forum.act_as`); nil otherwise.
  let sessionHash: [UInt8]?

  public init(userId: String?, roles: [String] = [], isMaster: Bool = false) {
    self.init(userId: userId, roles: roles, isMaster: isMaster, sessionHash: nil)
  }

  init(userId: String?, roles: [String] = [], isMaster: Bool = false, sessionHash: [UInt8]?) {
    self.userId = userId
    var names: Set<String> = ["*"]
    if let userId { names.insert(userId) }
    for role in roles { names.insert("role:" + role) }
    self.names = names
    self.isMaster = isMaster
    self.sessionHash = sessionHash
  }

  public static let anonymous = Principals(userId: nil)
  static let master = Principals(userId: nil, isMaster: true)
}
