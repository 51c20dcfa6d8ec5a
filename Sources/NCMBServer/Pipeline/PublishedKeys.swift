import Datastore
import Synchronization

/// What `GET forum/keys` answers, the one unsigned path: the keys as the last admitted request
/// read them (read at start), and the board's id, which never changes. It borrows no database
/// connection, so it needs no place among an address's share of them (`StorePool`). Keys
/// rotated by the owner (`forum keys --rotate`) are published by the first signed request
/// after it: a client with the old ones is refused `E404005` and asks again.
final class PublishedKeys: Sendable {
  /// The path, which the signature check lets through unsigned.
  static let path = NCMBRoute.prefix + "forum/keys"

  private let keys: Mutex<ApplicationKeys>
  private let boardId: String

  init(_ keys: ApplicationKeys, boardId: String) {
    self.keys = Mutex(keys)
    self.boardId = boardId
  }

  /// Keeps `keys` if they are new.
  func note(_ keys: ApplicationKeys) {
    self.keys.withLock { if $0 != keys { $0 = keys } }
  }

  /// The board's application and client keys and its id, for forum's remote engine to sign
  /// with. They identify an application, not a person (every copy of an NCMB app carries them):
  /// the session authorizes, and the engine holds every rule.
  func answer() -> HTTPResponse {
    let keys = self.keys.withLock { $0 }
    return NCMBService.json(
      .object([
        "applicationKey": .string(keys.applicationKey), "clientKey": .string(keys.clientKey),
        "boardId": .string(boardId),
      ]))
  }
}
