/// The backend's error codes. Every failure a caller sees is one of these.
public enum ErrorCode: String, Sendable, CaseIterable {
  case invalid = "E400002"
  case empty = "E400003"
  case authentication = "E401001"
  case noAccess = "E403001"
  case notFound = "E404001"
  case fileTooLarge = "E413001"
  case systemError = "E500001"

  /// The backend's own message, as NCMB's REST API returns it (English only: apps read it).
  public func message(field: String?) -> String {
    switch self {
    case .invalid: return "\(field ?? "value") is invalid."
    case .empty: return "\(field ?? "value") is empty."
    case .authentication: return "Authentication error by header incorrect."
    case .noAccess: return "No access with ACL."
    case .notFound: return "No data available."
    case .fileTooLarge: return "File size Limit error."
    case .systemError: return "System error."
    }
  }
}

/// Why something failed, as a value with its arguments: every reason of the board, the
/// datastore, the file or server under them, the command line and the ssh door, each said by
/// its own enum in English and Japanese side by side. Closed: the one renderer
/// (`ErrorCode.sentence`) switches over it with no default.
public enum Reason: Sendable, Equatable, CustomStringConvertible {
  case board(BoardReason)
  case store(StoreReason)
  case access(BoardAccessReason)
  case account(AccountReason)
  case stopped(StatementStop)
  case input(InputReason)
  case door(DoorReason)
  /// Words no one here wrote or an app's mistake said for the app: a library's message
  /// (libpq's, strerror's), a `where` the datastore cannot run. Kept as they are, after a head
  /// in the reader's language.
  case words(String)

  /// The reason in the reader's words; `nil` for `.words`, which have only their own.
  /// `field`: the field the refused error names (`DatastoreError.field`).
  public func wording(field: String?, for reader: Reader) -> Wording? {
    switch self {
    case .board(let reason): return reason.wording(for: reader)
    case .store(let reason): return reason.wording(field: field, for: reader)
    case .access(let reason): return reason.wording
    case .account(let reason): return reason.wording
    case .stopped(let reason): return reason.wording
    case .input(let reason): return reason.wording(for: reader)
    case .door(let reason): return reason.wording
    case .words: return nil
    }
  }

  /// The English a program reads (`DatastoreError.detail`, an app's error after NCMB's message).
  public var description: String {
    if case .words(let words) = self { return words }
    return wording(field: nil, for: .program)?.english ?? ""
  }
}

extension ErrorCode {
  /// The one place a failure becomes a person's sentence: its reason in the reader's words, or,
  /// for a failure with no reason of ours, a head for its code with the words from below kept in
  /// parentheses.
  public func sentence(field: String?, reason: Reason?) -> Wording {
    let words: String?
    switch reason {
    case .words(let text)?: words = text
    case let reason?:
      if let said = reason.wording(field: field, for: .person) { return said }
      words = nil
    case nil: words = nil
    }
    let fieldName = FieldName.inside(field ?? "value")
    switch self {
    // Who the caller is or may be: PostgreSQL's `FA401` carries no words of ours.
    case .authentication: return Wording("Your session is no longer valid.", "セッションが無効です。")
    case .noAccess:
      let head = Wording("You don't have permission to do that.", "権限がないようです。")
      return words.map { Wording(head.english + " (\($0))", head.japanese + " (\($0))") } ?? head
    case .fileTooLarge:
      let tail = words.map { ": \($0)" } ?? ""
      return Wording("image is too large" + tail, "画像が大きすぎます" + tail)
    case .empty:
      let name = FieldName.of(field ?? "value")
      return Wording("\(name.english) is empty.", "\(name.japanese)が空です。")
    case .invalid:
      return Wording.after(words, english: message(field: field), "\(fieldName.japanese)が正しくありません。")
    case .notFound: return Wording.after(words, english: message(field: field), "見つかりません。")
    case .systemError: return Wording.after(words, english: message(field: field), "システムエラーです。")
    }
  }
}

extension Wording {
  /// Words from below: as they are in English (NCMB's message when there are none), after a
  /// Japanese head in Japanese.
  fileprivate static func after(_ words: String?, english message: String, _ head: String)
    -> Wording
  {
    Wording(words ?? message, head + (words.map { " (\($0))" } ?? ""))
  }
}

extension BoardReason: CustomStringConvertible {
  public var description: String { wording(for: .program).english }
}
extension StoreReason: CustomStringConvertible {
  public var description: String { wording(field: nil, for: .program).english }
}
extension BoardAccessReason: CustomStringConvertible {
  public var description: String { wording.english }
}
extension AccountReason: CustomStringConvertible {
  public var description: String { wording.english }
}
extension StatementStop: CustomStringConvertible {
  public var description: String { wording.english }
}
extension InputReason: CustomStringConvertible {
  public var description: String { wording(for: .program).english }
}
extension DoorReason: CustomStringConvertible {
  public var description: String { wording.english }
}
