import Foundation
import Testing

@testable import Datastore

/// `Query.greaterThan` / `lessThan`: the bounds keyset paging seeks by.
@Suite("Range conditions")
struct RangeQueryTests {
  @Test func boundsKeepTheRowsStrictlyBetween() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let client = store.master
      for number in 1...30 {
        _ = try client.create("Item", fields: ["number": .int(Int64(number))])
      }
      func numbers(_ query: Query) throws -> [Int64] {
        try client.find(query).compactMap { $0.fields["number"]?.intValue }
      }
      var query = Query(className: "Item", order: ["number"], limit: 5)
      query.greaterThan = ["number": 20]
      #expect(try numbers(query) == [21, 22, 23, 24, 25])
      query.lessThan = ["number": 23]
      #expect(try numbers(query) == [21, 22])
      #expect(try client.count(query) == 2)
      query.order = ["-number"]
      query.greaterThan = [:]
      #expect(try numbers(query) == [22, 21, 20, 19, 18])

      var bad = Query(className: "Item")
      bad.greaterThan = ["number) OR (1": 0]
      #expect(throws: DatastoreError.self) { try client.find(bad) }
    }
  }
}
