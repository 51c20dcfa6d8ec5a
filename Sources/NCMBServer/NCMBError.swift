import Datastore

/// An NCMB error answer: the HTTP status, the code and the message NCMB gave for it.
public struct NCMBError: Error, Equatable, Sendable {
  public let status: Int
  public let code: String
  public let message: String
  /// The reason as the catalogue's case, beside NCMB's code and message (`Reason.wire`): forum's
  /// remote engine says it in its reader's language where the code is none of the engine's.
  public var reason: Reason?

  public init(status: Int, code: String, message: String) {
    self.status = status
    self.code = code
    self.message = message
  }

  static let invalidJSON = NCMBError(status: 400, code: "E400001", message: "JSON is invalid.")
  static func invalid(_ field: String, _ why: String? = nil) -> NCMBError {
    NCMBError(
      status: 400, code: "E400002",
      message: "\(field) is invalid." + (why.map { " (\($0))" } ?? ""))
  }
  static func empty(_ field: String) -> NCMBError {
    NCMBError(status: 400, code: "E400003", message: "\(field) is empty.")
  }
  static let header = NCMBError(
    status: 401, code: "E401001", message: "Authentication error by header incorrect.")
  /// NCMB's E401001 with what in the headers was wrong: the signature, the timestamp, the
  /// session (never a value sent).
  static func header(_ why: String) -> NCMBError {
    NCMBError(
      status: 401, code: "E401001", message: "Authentication error by header incorrect. (\(why))")
  }
  static let badSignature = header("X-NCMB-Signature does not match the request")
  static func missingHeader(_ name: String) -> NCMBError { header("\(name) is missing") }
  static let staleTimestamp = header(
    "X-NCMB-Timestamp is malformed or more than 15 minutes from the server's clock")
  /// A request that needs a signed-in user sent no session token.
  static let noSession = header(
    "this needs a signed-in user: X-NCMB-Apps-Session-Token is missing")
  /// The session token sent is unknown or has ended (logout, expiry).
  static let unknownSession = header(
    "X-NCMB-Apps-Session-Token is unknown or has expired: sign in again")
  /// An application key that is not this board's (NCMB's E404005).
  static let noSuchApplication = NCMBError(
    status: 404, code: "E404005", message: "No such application.")
  static let idPass = NCMBError(
    status: 401, code: "E401002", message: "Authentication error with ID/PASS incorrect.")
  static let noAccess = NCMBError(status: 403, code: "E403001", message: "No access with ACL.")
  static let notFound = NCMBError(status: 404, code: "E404001", message: "No data available.")
  /// A part of NCMB's API the board has not (push, installations, password reset, batch,
  /// scripts): said so, where a bare E404001 reads as an object that is missing.
  static func unsupported(_ feature: String) -> NCMBError {
    NCMBError(
      status: 404, code: "E404001",
      message: "No data available. (\(feature) is not supported by this server)")
  }
  /// What needs mail (sign-up by mail address, password reset): the board sends none.
  static func mailServer(_ feature: String) -> String {
    "\(feature) needs a mail server, which this board does not have"
  }
  static func needsMail(_ feature: String) -> NCMBError {
    NCMBError(
      status: 404, code: "E404001", message: "No data available. (\(mailServer(feature)))")
  }
  /// A unique value taken (a `userName`): NCMB's E409001.
  static func duplicate(_ field: String) -> NCMBError {
    NCMBError(status: 409, code: "E409001", message: "\(field) is duplication.")
  }
  static let method = NCMBError(status: 405, code: "E405001", message: "Method not allowed.")
  static let fileTooLarge = NCMBError(
    status: 413, code: "E413001", message: "File size Limit error.")
  static let tooLarge = NCMBError(
    status: 413, code: "E413002", message: "Request entity too large.")
  static func mediaType(_ why: String) -> NCMBError {
    NCMBError(status: 415, code: "E415001", message: "Unsupported media type. (\(why))")
  }
  static let system = NCMBError(status: 500, code: "E500001", message: "Internal server error.")

  /// The datastore's refusal as NCMB said it. A system error says nothing of its cause (paths,
  /// server text): the client cannot act on it and should not learn it.
  init(_ error: DatastoreError) {
    switch error.code {
    case .invalid:
      self = .invalid(error.field ?? "value", error.detail)
    case .empty: self = .empty(error.field ?? "value")
    case .authentication:
      self = error.detail.map { .header($0) } ?? .noSession
    case .noAccess: self = NCMBError.noAccess.because(error.detail)
    case .notFound: self = NCMBError.notFound.because(error.detail)
    case .fileTooLarge: self = NCMBError.fileTooLarge.because(error.detail)
    case .systemError:
      // A request stopped by its budget says why: the client may try again, or ask less.
      if case .stopped(let stop)? = error.reason {
        self = NCMBError(
          status: 500, code: "E500001", message: "Internal server error. (\(stop))")
      } else {
        self = .system
      }
    }
  }

  /// The same refusal with the engine's reason after NCMB's message (`No access with ACL.
  /// (only you may be the writer)`): an app can say why, not only that.
  func because(_ why: String?) -> NCMBError {
    guard let why, !why.isEmpty else { return self }
    return NCMBError(status: status, code: code, message: message + " (\(why))")
  }

  /// The same refusal with `reason` in words after NCMB's message, and as the catalogue's case.
  func because(_ reason: Reason) -> NCMBError {
    var error = because(reason.description)
    error.reason = reason
    return error
  }

  var body: [UInt8] {
    var body: [String: JSONValue] = ["code": .string(code), "error": .string(message)]
    if let reason = reason?.wire { body["reason"] = reason }
    return Array(JSONValue.object(body).jsonText().utf8)
  }
}
