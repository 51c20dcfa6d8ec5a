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

/// One error type for the whole datastore: the backend's code and message, plus what a person needs
/// to act on it (`detail`).
public struct DatastoreError: Error, Equatable, CustomStringConvertible, Sendable {
  public let code: ErrorCode
  /// The field named in `E400002`/`E400003` messages.
  public let field: String?
  public let detail: String?

  public init(_ code: ErrorCode, field: String? = nil, detail: String? = nil) {
    self.code = code
    self.field = field
    self.detail = detail
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
