/// Placeholder until the PostgreSQL engine lands in `Sources/Datastore/Postgres/`, which replaces
/// this file with the real `makePostgresEngine(uri:)`.
func makePostgresEngine(uri: String) throws -> any DatastoreEngine {
  throw DatastoreError(
    .systemError, detail: "this forum was built without the PostgreSQL engine; use a file path")
}
