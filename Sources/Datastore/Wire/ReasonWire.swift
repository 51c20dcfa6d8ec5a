#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A refusal's reason on the wire: its case in the catalogue (`Sources/Refusals`) with its
/// arguments, `{"board":{"onlyAuthorMayDelete":{"author":"…","label":"#1"}}}`, so the client
/// says it in its reader's language as a local board would. Only the reasons a server's engine
/// gives cross (the board's, the datastore's, accounts', a stopped statement's); the
/// catalogue's cases are the codes, so a case this forum does not know (a newer or a hostile
/// server) reads as no reason, and the refusal keeps only its code and sanitized words.
extension Reason {
  public var wire: JSONValue? {
    switch self {
    case .board(let reason): Reason.encode("board", reason)
    case .store(let reason): Reason.encode("store", reason)
    case .account(let reason): Reason.encode("account", reason)
    case .stopped(let reason): Reason.encode("stopped", reason)
    case .access, .input, .door, .words: nil
    }
  }

  /// The reason `value` names; nil for anything that is not one of the catalogue's, whole.
  public init?(wire value: JSONValue) {
    guard case .object(let families) = value, families.count == 1, let entry = families.first,
      Wire.depth(of: entry.value) <= 8, entry.value.jsonBytes().count <= 4096,
      Reason.printable(entry.value)
    else { return nil }
    let (family, body) = (entry.key, entry.value)
    let bytes = Data(body.jsonBytes())
    func decoded<T: Decodable>(_ type: T.Type) -> T? {
      try? JSONDecoder().decode(type, from: bytes)
    }
    let reason: Reason? =
      switch family {
      case "board": decoded(BoardReason.self).map(Reason.board)
      case "store": decoded(StoreReason.self).map(Reason.store)
      case "account": decoded(AccountReason.self).map(Reason.account)
      case "stopped": decoded(StatementStop.self).map(Reason.stopped)
      default: nil
      }
    guard let reason else { return nil }
    self = reason
  }

  private static func encode<T: Encodable>(_ family: String, _ reason: T) -> JSONValue? {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    guard let bytes = try? encoder.encode(reason), let body = try? Wire.parse(Array(bytes))
    else { return nil }
    return .object([family: body])
  }

  /// Every text in `value` is printable and short: a hostile server's escapes never reach a
  /// sentence, even before the terminal's own sanitizing.
  private static func printable(_ value: JSONValue) -> Bool {
    switch value {
    case .string(let text): Wire.printable(text, limit: 200) == text
    case .array(let values): values.allSatisfy(printable)
    case .object(let fields):
      fields.allSatisfy { printable(.string($0.key)) && printable($0.value) }
    default: true
    }
  }
}
