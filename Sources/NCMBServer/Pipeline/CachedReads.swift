/// The read cache as a stage, between the session and the controller: a cacheable GET is
/// answered with the answer kept for its caller when there is one (`ReadCache`), else by
/// `respond`, and that is kept.
enum CachedReads {
  static func answer(
    _ call: NCMBCall, _ pooled: StorePool.Pooled, _ respond: () throws -> HTTPResponse
  ) throws -> HTTPResponse {
    guard call.method == "GET", call.route.isCacheable, !CachedReads.asksReadPositions(call)
    else { return try respond() }
    // The two shapes of one answer are kept apart.
    let key =
      ReadCache.key(call.request, call.client.principals) + (call.answersInWire ? "\nwire" : "")
    if let kept = pooled.cache.answer(for: key) { return kept }
    let response = try respond()
    pooled.cache.keep(
      response, for: key,
      dependsOn: .of(
        call.route, (try? call.parameters.values()) ?? [:], body: response.body,
        rules: pooled.store.rules))
    return response
  }

  /// Read positions are no object's, and no write to the class changes them: an answer that
  /// carries them (`unreadUpTo`) is not kept.
  private static func asksReadPositions(_ call: NCMBCall) -> Bool {
    NCMBQuery.names("unreadUpTo", in: call.request.rawQuery)
  }
}
