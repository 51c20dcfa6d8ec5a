/// The board's NCMB application and client keys: what an app built on an NCMB SDK carries to
/// sign its requests to `forum serve`. They identify an application, not a person (the session
/// does that); only the board's owner may read or rotate them.
public struct ApplicationKeys: Equatable, Sendable {
  public let applicationKey: String
  public let clientKey: String

  public init(applicationKey: String, clientKey: String) {
    self.applicationKey = applicationKey
    self.clientKey = clientKey
  }

  /// Fresh keys: 64 lower-case hex digits each (256 random bits), the shape NCMB's keys had.
  static func random() -> ApplicationKeys {
    func key() -> String {
      var generator = SystemRandomNumberGenerator()
      let digits = Array("0123456789abcdef".utf8)
      return String(
        decoding: (0..<64).map { _ in digits[Int(generator.next() % 16)] }, as: UTF8.self)
    }
    return ApplicationKeys(applicationKey: key(), clientKey: key())
  }

  public var json: JSONValue {
    .object(["applicationKey": .string(applicationKey), "clientKey": .string(clientKey)])
  }
}

extension Datastore {
  /// The board's keys, made on first use (or new ones with `rotate`: apps holding the old ones are
  /// refused from then on). SQLite: kept in the file's `meta` table, so whoever holds the file
  /// may read them; nothing reaches them through a `DatastoreClient`.
  public func applicationKeys(rotate: Bool = false) throws -> ApplicationKeys {
    try engine.applicationKeys(create: true, rotate: rotate)!
  }

  /// The keys if they were made, without making them (what the server checks requests with).
  public func existingApplicationKeys() throws -> ApplicationKeys? {
    try engine.applicationKeys(create: false, rotate: false)
  }
}
