import Datastore
import Testing

@testable import NCMBServer

/// What the server reads from a request's query and from an answer it keeps, byte by byte:
/// `NCMBQuery.parameters` and `names` split on the query's bytes, `ReadCache.Dependence.objectIds`
/// finds each object's id with `memchr`. Each must read what a reader going character by
/// character reads.
@Suite("Query and answer scanning")
struct AnswerScanTests {
  @Test func parametersAreSplitAndDecodedAsBefore() throws {
    let query = "where=%7B%22a%22%3A%22%E6%97%A5%22%7D&limit=20&empty=&bare&x+y=1%2B1&é=ü&a=b=c"
    let parameters = try NCMBQuery.parameters(query)
    #expect(parameters["where"] == #"{"a":"日"}"#)
    #expect(parameters["limit"] == "20")
    #expect(parameters["empty"] == "")
    #expect(parameters["bare"] == "")
    #expect(parameters["x y"] == "1+1")
    #expect(parameters["é"] == "ü")
    #expect(parameters["a"] == "b=c")
    #expect(parameters.count == 7)
    #expect(try NCMBQuery.parameters("") == [:])
    #expect(throws: NCMBError.self) { try NCMBQuery.parameters("where=%7") }
    #expect(throws: NCMBError.self) { try NCMBQuery.parameters("where=%00") }
    #expect(throws: NCMBError.self) { try NCMBQuery.parameters("where=%FF") }
    #expect(NCMBQuery.names("unreadUpTo", in: "limit=1&unreadUpTo=3"))
    #expect(NCMBQuery.names("unreadUpTo", in: "unread%55pTo=3"))
    #expect(!NCMBQuery.names("unreadUpTo", in: "where=unreadUpTo&unreadUpT=1"))
    // A name canonically equal to another is the same parameter to both.
    for query in ["e%CC%81=1", "e\u{301}=1"] {
      #expect(NCMBQuery.names("é", in: query))
      #expect(try NCMBQuery.parameters(query)["é"] == "1")
    }
  }

  @Test func everyObjectIdOfAnAnswerIsFound() {
    func ids(_ text: String) -> [String] {
      ReadCache.Dependence.objectIds(in: Array(text.utf8))
    }
    let object = JSONValue.object([
      "results": .array([
        .object(["objectId": .string("aB3"), "title": .string("Id of IDs")]),
        .object([
          "objectId": .string("x"),
          "thread": .pointer(className: "Thread", objectId: "t9"),
          "text": .string(#"says "objectId":"fake" inside"#),
        ]),
      ])
    ])
    #expect(Set(ids(object.jsonText())) == ["aB3", "x", "t9"])
    #expect(ids("") == [])
    #expect(ids("I") == [])
    #expect(ids(#"{"objectId":""#) == [""])
    #expect(ids(#"{"objectId":"abc"#) == ["abc"])
    #expect(ids(#""objectId":"a""objectId":"b""#) == ["a", "b"])
    #expect(ids(#"IIII"objectId":"a"}"#) == ["a"])
  }
}
