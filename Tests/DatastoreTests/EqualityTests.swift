import Foundation
import Testing

@testable import Datastore

@Suite("Equality conditions")
struct EqualityTests {
  @Test func valuesMatchExactly() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let master = store.master
      let values: [JSONValue] = [
        .string("a"), .string("ab"), .string(""), .string("スレッド"), .int(7), .double(1.5),
        .bool(true), .bool(false), .null,
        .pointer(className: "Thread", objectId: "ABCDEFGHijklmnop"),
        .pointer(className: "Thread", objectId: "ABCDEFGHijklmnoq"),
        .array([.int(1), .string("x")]),
      ]
      var ids: [String] = []
      for value in values {
        ids.append(try master.create("Item", fields: ["value": value]).objectId)
      }
      let withoutValue = try master.create("Item", fields: [:]).objectId
      for (index, value) in values.enumerated() {
        let found = try master.find(Query(className: "Item", equalTo: ["value": value]))
        // A missing field counts as null.
        let expected = value == .null ? [ids[index], withoutValue] : [ids[index]]
        #expect(found.map(\.objectId) == expected, "\(value)")
        #expect(
          try master.count(Query(className: "Item", equalTo: ["value": value])) == expected.count)
      }
      #expect(try master.find(Query(className: "Item", equalTo: ["value": .string("A")])).isEmpty)
      #expect(try master.find(Query(className: "Item", equalTo: ["value": .int(8)])).isEmpty)
    }
  }
}
