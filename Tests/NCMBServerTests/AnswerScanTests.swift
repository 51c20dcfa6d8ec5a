import Datastore
import Testing

@testable import NCMBServer

/// What the server reads from a request's path and query and from an answer it keeps, byte by
/// byte: `NCMBRoute` and `NCMBQuery.parameters` and `names` split on the bytes,
/// `ReadCache.Dependence.objectIds` finds each object's id with `memchr`. Each must read what a
/// reader going character by character reads.
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
    func ids(_ text: String) -> [ObjectIdKey] {
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

  /// The read cache's ids are packed into words (`ObjectIdKey`): ids that differ in any byte,
  /// or only in length, stay apart at every length, and an id found in an answer is the same
  /// key as the one a write names by its text.
  @Test func objectIdKeysTellEveryIdApart() {
    var keys: Set<ObjectIdKey> = []
    var texts: Set<String> = []
    for length in 0...40 {
      let base = String(repeating: "a", count: length)
      for id in [
        base, base + "\u{0}", length > 0 ? String(base.dropLast()) + "b" : "b", base + "é",
      ] {
        texts.insert(id)
        keys.insert(ObjectIdKey(id))
        let answer = Array(#"{"objectId":"\#(id)"}"#.utf8)
        #expect(ReadCache.Dependence.objectIds(in: answer) == [ObjectIdKey(id)], "\(id)")
      }
    }
    #expect(keys.count == texts.count)
    // Repeats close together are kept once (a thread named by each of its comments); the
    // indexes take repeats farther apart.
    let page = (0..<20).map { #"{"objectId":"c\#($0)","thread":{"objectId":"T"}}"# }
    let found = ReadCache.Dependence.objectIds(
      in: Array(("[" + page.joined(separator: ",") + "]").utf8))
    #expect(found.filter { $0 == "T" }.count < 20)
    #expect(Set(found) == Set((0..<20).map { ObjectIdKey("c\($0)") } + ["T"]))
  }

  @Test func aQuerysParametersAreParsedOnceAndRefusedAlike() throws {
    let good = QueryParameters("where=%7B%7D&limit=2")
    #expect(try good.values() == ["where": "{}", "limit": "2"])
    #expect(try good.values() == ["where": "{}", "limit": "2"])
    let bad = QueryParameters("where=%7")
    #expect(throws: NCMBError.self) { try bad.values() }
    #expect(throws: NCMBError.self) { try bad.values() }
  }

  @Test func aPathIsSplitOnItsSlashesAndDecoded() throws {
    let route = try NCMBRoute(path: "/2013-09-01/classes/%54hread/a%2Fb")
    #expect(route.resource == .classes)
    #expect(route.names == ["Thread", "a/b"])  // an escaped slash stays in its segment
    #expect(try NCMBRoute(path: "/2013-09-01/classes/Thread/").names == ["Thread"])
    #expect(try NCMBRoute(path: "/2013-09-01/classes/日本").names == ["日本"])
    for bad in [
      "/2013-09-01/classes//x", "/2013-09-01/", "/2013-09-01/classes/Thread/x/y",
      "/2013-09-01/classes/%ZZ", "/2013-09-01/classes/a%00",
    ] {
      #expect(throws: NCMBError.self, "\(bad)") { try NCMBRoute(path: bad) }
    }
  }
}
