import Testing

@testable import Datastore

/// libpq is opened with dlopen when a PostgreSQL board is opened (issue #13), not linked: what a
/// person sees when it is missing or is not libpq, and that the real one loads.
@Suite("libpq loading")
struct LibPQLoadingTests {
  @Test("a missing libpq is one line that says to install libpq5")
  func missingLibrary() throws {
    let error = try #require(throws: DatastoreError.self) {
      try LibPQ.load(names: ["libpq-forum-test-missing.so.5"])
    }
    #expect(error.code == .systemError)
    let detail = try #require(error.detail)
    #expect(detail.contains("install libpq5"), "\(detail)")
    #expect(detail.contains("libpq-forum-test-missing.so.5"), "dlopen's reason: \(detail)")
    #expect(!detail.contains("\n"))
  }

  @Test("a library without libpq's functions is refused, naming the first one missing")
  func libraryWithoutTheFunctions() throws {
    let error = try #require(throws: DatastoreError.self) {
      try LibPQ.load(names: ["libc.so.6"])
    }
    let detail = try #require(error.detail)
    #expect(detail.contains("libc.so.6 has no PQconninfoParse"), "\(detail)")
    #expect(detail.contains("install libpq5"), "\(detail)")
  }

  @Test("the names are tried in order: a missing first name falls through to libpq")
  func fallsThroughToLibPQ() throws {
    let pq = try LibPQ.load(names: ["libpq-forum-test-missing.so.5"] + LibPQ.libraryNames)
    // A function of the table that needs no connection: libpq's own default parameters parse.
    var message: UnsafeMutablePointer<CChar>?
    let options = try #require(pq.PQconninfoParse("postgresql:///forum", &message))
    pq.PQconninfoFree(options)
    #expect(message == nil)
  }
}
