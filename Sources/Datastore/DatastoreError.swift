// The catalogue of reasons lives below every layer (Refusals): whoever imports Datastore names
// them as before.
// `canImport`: the json fuzz target compiles this file with the catalogue's in one module.
#if canImport(Refusals)
  @_exported import Refusals
#endif

/// One error type for the whole datastore: the backend's code and message, plus what a person needs
/// to act on it (`reason`, in English `detail`).
public struct DatastoreError: Error, Equatable, CustomStringConvertible, Sendable {
  public let code: ErrorCode
  /// The field named in `E400002`/`E400003` messages.
  public let field: String?
  public let reason: Reason?

  public init(_ code: ErrorCode, field: String? = nil, reason: Reason?) {
    self.code = code
    self.field = field
    self.reason = reason
  }

  /// A failure whose reason is only words (`Reason.words`).
  public init(_ code: ErrorCode, field: String? = nil, detail: String? = nil) {
    self.init(code, field: field, reason: detail.map(Reason.words))
  }

  // Each part of the catalogue by its own name, as the layers that refuse spell it.
  public init(_ code: ErrorCode, field: String? = nil, reason: BoardReason) {
    self.init(code, field: field, reason: .board(reason))
  }
  public init(_ code: ErrorCode, field: String? = nil, reason: StoreReason) {
    self.init(code, field: field, reason: .store(reason))
  }
  public init(_ code: ErrorCode, field: String? = nil, reason: BoardAccessReason) {
    self.init(code, field: field, reason: .access(reason))
  }
  public init(_ code: ErrorCode, field: String? = nil, reason: AccountReason) {
    self.init(code, field: field, reason: .account(reason))
  }
  public init(_ code: ErrorCode, field: String? = nil, reason: StatementStop) {
    self.init(code, field: field, reason: .stopped(reason))
  }
  public init(_ code: ErrorCode, field: String? = nil, reason: InputReason) {
    self.init(code, field: field, reason: .input(reason))
  }
  public init(_ code: ErrorCode, field: String? = nil, reason: DoorReason) {
    self.init(code, field: field, reason: .door(reason))
  }

  /// The reason in English, as a program reads it.
  public var detail: String? { reason?.description }

  /// A statement stopped by its budget (`StatementStop`), not a failure of the store.
  public var isStop: Bool {
    if case .stopped? = reason { return true }
    return false
  }

  /// What a person reads, in English and Japanese (`ErrorCode.sentence`).
  public var wording: Wording { code.sentence(field: field, reason: reason) }

  public static func == (left: DatastoreError, right: DatastoreError) -> Bool {
    left.code == right.code && left.field == right.field && left.detail == right.detail
  }

  /// The backend's own message, as its REST API would return it.
  public var message: String { code.message(field: field) }

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
