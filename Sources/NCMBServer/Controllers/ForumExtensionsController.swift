@_spi(Server) import Datastore

/// The board's own endpoints beyond NCMB's API, under `/2013-09-01/forum/NAME[/…]`: what forum's
/// remote engine needs that NCMB never had (the change feed, read positions, search, moderation…)
/// and what apps may use beside NCMB's calls. They pass the same pipeline as NCMB's paths
/// (limits, signature, session) before their controller is asked, but `keys`, which forum
/// clients ask first to sign with (`NCMBService.forumKeys`). Each runs its engine call as the
/// request's session user; values cross in the board's wire format (`Sources/Datastore/Wire`).
struct ForumExtensionsController: NCMBController {
  /// Each endpoint's controller by its NAME (the first segment after `forum/`).
  static let table: [String: any NCMBController] = [
    "changes": ForumChangesController(),
    "feed": ForumFeedController(),
    "session": ForumSessionController(),
    "clock": ForumClockController(),
    "perform": ForumPerformController(),
    "find": ForumFindController(),
    "count": ForumCountController(),
    "get": ForumGetController(),
    "fetch": ForumFetchController(),
    "search": ForumSearchController(),
    "read": ForumReadController(),
    "unread": ForumUnreadController(),
    "revisions": ForumRevisionsController(),
    "moderate": ForumModerateController(),
    "flag": ForumFlagController(),
    "role": ForumRoleController(),
    "members": ForumMembersController(),
    "setting": ForumSettingController(),
    "setSetting": ForumSetSettingController(),
  ]

  /// The endpoints that only read, though their query comes as a POST body: never queued
  /// among writes (`NCMBService`'s write batches).
  static let reads: Set<String> = [
    "find", "count", "get", "fetch", "search", "unread", "revisions", "members", "setting",
  ]

  /// The largest JSON body `request` may have: the wire's (a file and an object at the board's
  /// limits) for these endpoints and for forum's remote engine's writes on NCMB's own
  /// `classes`/`users` paths (`X-Forum-Wire: 1`: the engine's limits, as on a local board);
  /// NCMB's for the rest, apps' writes included.
  static func largestBody(_ request: HTTPRequest) -> Int {
    let path = request.path
    if path.hasPrefix(NCMBRoute.prefix + "forum/") { return Wire.maximumBodyBytes }
    let enginesWrite =
      request.header(lowercased: NCMBCall.wireHeader) == "1"
      && (path.hasPrefix(NCMBRoute.prefix + "classes/")
        || path.hasPrefix(NCMBRoute.prefix + "users/"))
    return enginesWrite ? Wire.maximumBodyBytes : NCMBService.maximumJSONBytes
  }

  /// True when `path` is one of `reads`.
  static func onlyReads(_ path: String) -> Bool {
    let prefix = NCMBRoute.prefix + "forum/"
    guard path.hasPrefix(prefix) else { return false }
    return reads.contains(String(path.dropFirst(prefix.count)))
  }

  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard let name = call.route.names.first, let controller = Self.table[name] else {
      throw NCMBError.notFound
    }
    do {
      return try controller.respond(to: call)
    } catch let error as WriteOperationError {
      guard let refusal = error.error as? DatastoreError else { throw error.error }
      return ForumWire.refusal(refusal, step: error.step)
    } catch let error as DatastoreError
      where !(error.code == .authentication && error.detail == nil) && !error.isStop
    {
      return ForumWire.refusal(error)
    }
  }
}
