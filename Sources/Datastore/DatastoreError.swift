/// The backend's error codes. Every failure a caller sees is one of these.
public enum ErrorCode: String, Sendable, CaseIterable {
  case invalid = "E400002"
  case empty = "E400003"
  case authentication = "E401001"
  case noAccess = "E403001"
  case notFound = "E404001"
  case fileTooLarge = "E413001"
  case systemError = "E500001"
}

/// Why something failed, as a value with its arguments: the layer that knows the words (the CLI's
/// `Messages`) renders each case in the reader's language; `description` is the English. No
/// layer reads a reason back out of its text.
public protocol ErrorReason: Sendable, CustomStringConvertible {}

/// A reason known only as English words (a system failure naming a path or a library's message):
/// shown as it is, inside a sentence of the reader's language.
public struct TextReason: ErrorReason, Equatable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// The datastore's own reasons.
public enum StoreReason: ErrorReason, Equatable {
  /// What a ban's refusal says, on every engine (PostgreSQL's trigger raises these words).
  public static let bannedWords = "you are banned from this board: you may read, not write"
  /// A file of `bytes` over the board's `limit`.
  case fileTooLarge(bytes: Int, limit: Int)
  /// A pointer names a user that does not exist.
  case noSuchUser
  /// A parent named by `field` does not exist (or cannot be read).
  case noSuchParent(field: String)
  /// A unique value (an object id, a file name, a pair) is taken.
  case alreadyExists
  case noSuchFile(String)
  /// The owner field names someone other than the caller.
  case mustBeYou(field: String)
  case onlyYouMayWrite
  case usersAreMadeBySigningIn
  case writersMustStayTheAuthor
  /// A flag (`FlagRule`) that only the board's owner and members of `role` set or clear.
  case onlyRoleMaySet(field: String, role: String)
  /// Bytes from outside (a terminal, a pipe, a file) that are not UTF-8.
  case notUTF8
  /// A PostgreSQL board set up by an older forum: `forum init` brings it up to date (`owner`:
  /// the caller owns the schema, so may run it).
  case olderSchema(owner: Bool)
  /// One answer's objects would cost more than `budget` to build (`Query.costBudget`).
  case answerTooLarge(budget: Int)
  /// The caller is in the banned role (`StewardRule`): they write nothing on this board.
  case banned

  public var description: String {
    switch self {
    case .fileTooLarge(let bytes, let limit): return "\(bytes) bytes, the limit is \(limit)"
    case .noSuchUser: return "no such user"
    case .noSuchParent(let field): return "no such \(field)"
    case .alreadyExists: return "already exists"
    case .noSuchFile(let name): return "there is no file \(name)"
    case .mustBeYou(let field): return "\(field) must be you"
    case .onlyYouMayWrite: return "only you may be the writer"
    case .usersAreMadeBySigningIn: return "users are made by signing in"
    case .writersMustStayTheAuthor: return "the writers must stay the author"
    case .onlyRoleMaySet(let field, let role):
      return "only the board's owner and role:\(role) may set \(field)"
    case .notUTF8: return "not valid UTF-8"
    case .olderSchema(let owner):
      return "this board was set up by an older forum: " + (owner ? "run" : "its owner must run")
        + " `forum init --db URI` once to bring it up to date"
    case .answerTooLarge(let budget):
      return "the objects asked for are larger than one answer holds (\(budget / 1_048_576) MiB "
        + "to build); ask for fewer"
    case .banned: return StoreReason.bannedWords
    }
  }
}

/// One error type for the whole datastore: the backend's code and message, plus what a person needs
/// to act on it (`reason`, in English `detail`).
public struct DatastoreError: Error, Equatable, CustomStringConvertible, Sendable {
  public let code: ErrorCode
  /// The field named in `E400002`/`E400003` messages.
  public let field: String?
  public let reason: (any ErrorReason)?

  public init(_ code: ErrorCode, field: String? = nil, reason: (any ErrorReason)?) {
    self.code = code
    self.field = field
    self.reason = reason
  }

  /// A failure whose reason is only words (`TextReason`).
  public init(_ code: ErrorCode, field: String? = nil, detail: String? = nil) {
    self.init(code, field: field, reason: detail.map(TextReason.init))
  }

  /// The reason in English.
  public var detail: String? { reason?.description }

  public static func == (left: DatastoreError, right: DatastoreError) -> Bool {
    left.code == right.code && left.field == right.field && left.detail == right.detail
  }

  /// The backend's own message, as its REST API would return it.
  public var message: String {
    switch code {
    case .invalid: return "\(field ?? "value") is invalid."
    case .empty: return "\(field ?? "value") is empty."
    case .authentication: return "Authentication error by header incorrect."
    case .noAccess: return "No access with ACL."
    case .notFound: return "No data available."
    case .fileTooLarge: return "File size Limit error."
    case .systemError: return "System error."
    }
  }

  public var description: String {
    guard let detail else { return "\(code.rawValue) \(message)" }
    return "\(code.rawValue) \(message) (\(detail))"
  }

  static func invalid(_ field: String, _ detail: String? = nil) -> DatastoreError {
    DatastoreError(.invalid, field: field, detail: detail)
  }

  static func empty(_ field: String) -> DatastoreError { DatastoreError(.empty, field: field) }

  static let notFound = DatastoreError(.notFound)
  static let noAccess = DatastoreError(.noAccess)
}
