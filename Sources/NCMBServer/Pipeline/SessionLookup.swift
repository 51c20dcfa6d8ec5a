import Datastore

/// The pipeline's third stage: the caller. No session token is a caller without a session
/// (`*` alone); a token that is unknown or has ended is refused as such.
enum SessionLookup {
  static func client(_ request: HTTPRequest, _ store: Datastore, _ mark: StateMark?) throws
    -> DatastoreClient
  {
    do {
      return try store.client(
        sessionToken: request.header(lowercased: "x-ncmb-apps-session-token"), known: mark)
    } catch let error as DatastoreError where error.code == .authentication {
      throw NCMBError.unknownSession
    }
  }

  /// The engine's "no user" (`E401001` with no reason) said as what it is for this caller: a
  /// request that needed a session and sent none.
  static func refusal<T>(of client: DatastoreClient, _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as DatastoreError
      where error.code == .authentication && error.detail == nil
    {
      throw client.userId == nil ? NCMBError.noSession : NCMBError.unknownSession
    }
  }
}
