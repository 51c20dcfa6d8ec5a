import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// NCMB's REST API (2013-09-01) over a `Datastore`: signature, sessions, classes, users, login,
/// roles, files. Knows no threads: the board's rules are the engine's.
public final class NCMBService: HTTPHandler, @unchecked Sendable {
  /// The prefix every NCMB path starts with.
  public static let apiVersion = "2013-09-01"

  private let location: String

  /// A service for the board at `location` (opened per worker as the engine allows).
  public init(location: String) throws {
    self.location = location
  }

  public func respond(to request: HTTPRequest) -> HTTPResponse {
    let body = #"{"code":"E404001","error":"No data available."}"#
    return HTTPResponse(
      status: 404, headers: [("content-type", "application/json")], body: Array(body.utf8))
  }
}
