extension PostgresEngine {
  /// Not yet on PostgreSQL: the keys need an owner-only table no member can read.
  func applicationKeys(create: Bool, rotate: Bool) throws -> ApplicationKeys? {
    throw DatastoreError(
      .systemError, detail: "application keys are not available on PostgreSQL boards yet")
  }
}
