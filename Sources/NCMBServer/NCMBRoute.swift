import Datastore

/// Where a request goes: the one route table of NCMB's paths the board serves
/// (`/2013-09-01/RESOURCE[/NAME…]`), each resource answered by its controller.
struct NCMBRoute {
  enum Resource: Sendable {
    case classes, users, login, logout, roles, files, batch
    /// The board's own endpoints beyond NCMB's API (`/2013-09-01/forum/NAME…`), for forum's
    /// remote engine and for apps: one table, `ForumExtensionsController.table`.
    case forum

    /// One controller per resource.
    var controller: any NCMBController {
      switch self {
      case .classes: ObjectsController()
      case .users, .login, .logout: UsersController()
      case .roles: RolesController()
      case .files: FilesController()
      case .batch: BatchController()
      case .forum: ForumExtensionsController()
      }
    }
  }

  let resource: Resource
  /// The percent-decoded path segments after the resource's name (`Thread`, an object id, a
  /// file name).
  let names: [String]

  /// The prefix every NCMB path starts with.
  static let prefix = "/\(NCMBService.apiVersion)/"

  /// Each resource's name in the path and how many segments may follow it.
  static let table: [String: (resource: Resource, following: ClosedRange<Int>)] = [
    "classes": (.classes, 1...2), "users": (.users, 0...1), "login": (.login, 0...0),
    "logout": (.logout, 0...0), "roles": (.roles, 0...1), "files": (.files, 0...1),
    "batch": (.batch, 0...0), "forum": (.forum, 1...3),
  ]

  /// NCMB's paths the board does not serve, by the feature each was.
  static let unsupported = [
    "push": "push", "installations": "installations",
  ]

  /// NCMB's paths that send mail, which the board cannot: each said so.
  static let needMail = [
    "requestPasswordReset": "password reset by mail",
    "requestMailAddressUserEntry": "sign-up by mail address",
  ]

  /// A path outside NCMB's API version (scripts included) is refused before anything else.
  static func checkVersion(_ path: String) throws {
    guard path.hasPrefix(prefix) else {
      if path.hasPrefix("/2015-09-01/script") { throw NCMBError.unsupported("scripts") }
      throw NCMBError.notFound
    }
  }

  init(path: String) throws {
    try NCMBRoute.checkVersion(path)
    // Split on the path's bytes, as the signature reads it (`/` is ASCII): by Character, a
    // slash followed by a combining mark was no slash, and the split cost every request.
    var segments = path.utf8.dropFirst(NCMBRoute.prefix.utf8.count).split(
      separator: UInt8(ascii: "/"), omittingEmptySubsequences: false
    ).map(Substring.init)
    if segments.last == "" { segments.removeLast() }  // the Python SDK's trailing slash
    guard !segments.isEmpty, !segments.contains("") else { throw NCMBError.notFound }
    let names = try segments.map { try NCMBQuery.decode($0, field: "path", plusIsSpace: false) }
    guard let entry = NCMBRoute.table[names[0]] else {
      if let feature = NCMBRoute.unsupported[names[0]] { throw NCMBError.unsupported(feature) }
      if let feature = NCMBRoute.needMail[names[0]] { throw NCMBError.needsMail(feature) }
      throw NCMBError.notFound
    }
    guard entry.following.contains(names.count - 1) else { throw NCMBError.notFound }
    resource = entry.resource
    self.names = Array(names.dropFirst())
  }

  /// A GET here reads nothing but the database as the caller: its answer may be kept
  /// (`ReadCache`).
  var isCacheable: Bool {
    switch resource {
    case .classes, .users, .roles, .files: true
    case .login, .logout, .batch, .forum: false
    }
  }
}

/// One admitted request as a controller sees it: signed, its session resolved, routed.
struct NCMBCall {
  let request: HTTPRequest
  let route: NCMBRoute
  let store: Datastore
  let client: DatastoreClient
  let policy: NCMBPolicy
  var limits: ServeLimits = .none
  /// The server's rate limits, for what a controller counts itself (wrong passwords by name).
  var rates: RateLimits? = nil
  /// The query string's parameters, parsed once for the controller and the read cache.
  let parameters: QueryParameters

  init(
    request: HTTPRequest, route: NCMBRoute, store: Datastore, client: DatastoreClient,
    policy: NCMBPolicy, limits: ServeLimits = .none, rates: RateLimits? = nil
  ) {
    (self.request, self.route, self.store, self.client) = (request, route, store, client)
    (self.policy, self.limits, self.rates) = (policy, limits, rates)
    parameters = QueryParameters(request.rawQuery)
  }

  var method: String { request.method }

  /// forum's remote engine asks NCMB's calls for the board's wire shape of their answers
  /// (`Sources/Datastore/Wire`: every field as the engine holds it, which NCMB's shape for apps
  /// leaves out or rewrites) and of their refusals (the reason as the catalogue's case).
  var answersInWire: Bool { request.header(lowercased: NCMBCall.wireHeader) == "1" }

  static let wireHeader = "x-forum-wire"
}

/// A query string's parameters (`NCMBQuery.parameters`), parsed the first time a stage asks:
/// a kept read's dependence and its controller read the same ones (the parse was 3 % of a
/// served page of comments, done twice).
final class QueryParameters {
  private let rawQuery: String
  private var parsed: Result<[String: String], any Error>?

  init(_ rawQuery: String) { self.rawQuery = rawQuery }

  /// The parameters, or the parse's refusal, the same each time.
  func values() throws -> [String: String] {
    if let parsed { return try parsed.get() }
    let result = Result { try NCMBQuery.parameters(rawQuery) }
    parsed = result
    return try result.get()
  }
}

/// Answers the requests of one resource.
protocol NCMBController: Sendable {
  func respond(to call: NCMBCall) throws -> HTTPResponse
}

extension NCMBService {
  static let jsonHeaders = [(name: "content-type", value: "application/json; charset=utf-8")]

  static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
    json(bytes: value.jsonBytes(), status: status)
  }

  /// An answer whose JSON is already written.
  static func json(bytes: [UInt8], status: Int = 200) -> HTTPResponse {
    HTTPResponse(status: status, headers: jsonHeaders, body: bytes)
  }

  /// An empty 200, as NCMB answers a delete.
  static let deleted = HTTPResponse(status: 200, headers: jsonHeaders)
}
