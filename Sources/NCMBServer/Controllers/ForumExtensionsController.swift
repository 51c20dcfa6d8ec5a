/// The board's own endpoints beyond NCMB's API, under `/2013-09-01/forum/NAME[/…]`: what forum's
/// remote engine needs that NCMB never had (the change feed, read positions, search, moderation…)
/// and what apps may use beside NCMB's calls. They pass the same pipeline as NCMB's paths
/// (limits, signature, session) before their controller is asked.
struct ForumExtensionsController: NCMBController {
  /// Each endpoint's controller by its NAME (the first segment after `forum/`).
  static let table: [String: any NCMBController] = [
    "changes": ForumChangesController(),
    "feed": ForumFeedController(),
  ]

  func respond(to call: NCMBCall) throws -> HTTPResponse {
    guard let name = call.route.names.first, let controller = Self.table[name] else {
      throw NCMBError.notFound
    }
    return try controller.respond(to: call)
  }
}
