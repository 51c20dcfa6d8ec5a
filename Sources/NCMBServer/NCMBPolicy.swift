import Datastore

/// What the application above the datastore adds to the API's checks, injected by whoever
/// starts the server (the serve command gives the board's: its field rules and image checks).
/// The server itself knows no threads.
public struct NCMBPolicy: Sendable {
  /// Checks a file an app uploads and returns what to store (it may strip metadata). A thrown
  /// `DatastoreError` is answered with its code, anything else with `E415001` and the error's
  /// description as the reason.
  public var file:
    @Sendable (_ name: String, _ bytes: [UInt8], _ mimeType: String) throws -> (
      bytes: [UInt8], mimeType: String
    )
  /// Checks the fields an app creates (`objectId` nil) or updates the object `objectId` of
  /// `className` with and returns the fields to write, as the caller `client`.
  public var object:
    @Sendable (
      _ className: String, _ fields: [String: JSONValue], _ objectId: String?,
      _ client: DatastoreClient
    ) throws -> [String: JSONValue]
  /// The same check on what forum's remote engine writes (`X-Forum-Wire: 1` on `classes` and
  /// `users`, each write step of `forum/perform`), which anyone with the keys may send: the
  /// application's limits, in the form its own writes take. By default `object`.
  public var engineObject:
    @Sendable (
      _ className: String, _ fields: [String: JSONValue], _ objectId: String?,
      _ client: DatastoreClient
    ) throws -> [String: JSONValue]
  /// How the API answers an object (with the objects it includes): the application's one JSON
  /// shape for its objects, as NCMB answered an app (`ObjectShape.forApps`). By default the
  /// datastore's (`DataObject.json`).
  /// Set once (`init` makes it the app's: `forApps`), so that no later change can show apps
  /// what NCMB hid from them.
  public private(set) var shape: ObjectShape
  /// Fields of a class that the application stores as milliseconds and `present` answers as
  /// NCMB's Dates: a query's Date on them is compared as milliseconds.
  public var millisecondDates: @Sendable (_ className: String) -> Set<String>

  public init(
    file:
      @escaping @Sendable (String, [UInt8], String) throws -> (
        bytes: [UInt8], mimeType: String
      ) = { _, bytes, mimeType in (bytes, mimeType) },
    object:
      @escaping @Sendable (String, [String: JSONValue], String?, DatastoreClient) throws ->
      [String: JSONValue] = { _, fields, _, _ in fields },
    engineObject: (
      @Sendable (String, [String: JSONValue], String?, DatastoreClient) throws -> [String:
        JSONValue]
    )? = nil,
    shape: ObjectShape = .datastore,
    millisecondDates: @escaping @Sendable (String) -> Set<String> = { _ in [] }
  ) {
    self.file = file
    self.object = object
    self.engineObject = engineObject ?? object
    self.shape = shape.forApps
    self.millisecondDates = millisecondDates
  }

  /// Accepts what the datastore accepts.
  public static let none = NCMBPolicy()
}

extension NCMBPolicy {
  /// `file`, refused as the API refuses (`refusing`).
  func checkedFile(_ name: String, _ bytes: [UInt8], _ mimeType: String) throws -> (
    bytes: [UInt8], mimeType: String
  ) {
    try NCMBPolicy.refusing { try file(name, bytes, mimeType) }
  }

  /// `object`, refused as the API refuses (`refusing`).
  func checkedObject(
    _ className: String, _ fields: [String: JSONValue], _ objectId: String?,
    _ client: DatastoreClient
  ) throws -> [String: JSONValue] {
    try NCMBPolicy.refusing { try object(className, fields, objectId, client) }
  }

  /// `engineObject`, refused as the API refuses (`refusing`).
  func checkedEngineObject(
    _ className: String, _ fields: [String: JSONValue], _ objectId: String?,
    _ client: DatastoreClient
  ) throws -> [String: JSONValue] {
    try NCMBPolicy.refusing { try engineObject(className, fields, objectId, client) }
  }

  /// Runs one of the application's checks: a refusal that is neither the datastore's nor NCMB's
  /// (a picture the application cannot read) is NCMB's E415001, saying why.
  private static func refusing<T>(_ check: () throws -> T) throws -> T {
    do {
      return try check()
    } catch let error as DatastoreError {
      throw error
    } catch let error as NCMBError {
      throw error
    } catch {
      throw NCMBError.mediaType(String(describing: error))
    }
  }
}
