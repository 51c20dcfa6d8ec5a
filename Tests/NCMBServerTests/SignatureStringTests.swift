import Testing

@testable import NCMBServer

/// `NCMBSignature.stringToSign` is made over bytes; it must give what sorting the parameters
/// as strings gives (the reference below), with repeated names, empty pieces and odd bytes.
@Suite("NCMB string to sign")
struct SignatureStringTests {
  static func reference(
    method: String, host: String, path: String, rawQuery: String, applicationKey: String,
    timestamp: String
  ) -> String {
    var parameters = rawQuery.split(separator: "&").map(String.init)
    parameters += [
      "SignatureMethod=HmacSHA256", "SignatureVersion=2",
      "X-NCMB-Application-Key=\(applicationKey)", "X-NCMB-Timestamp=\(timestamp)",
    ]
    func name(_ parameter: String) -> Substring { parameter.prefix { $0 != "=" } }
    let sorted = parameters.enumerated().sorted {
      let (a, b) = (name($0.element), name($1.element))
      return a == b ? $0.offset < $1.offset : Array(a.utf8).lexicographicallyPrecedes(b.utf8)
    }.map(\.element)
    return [method, host, path, sorted.joined(separator: "&")].joined(separator: "\n")
  }

  @Test func agreesWithSortingStrings() {
    let pieces = [
      "where=%7B%22a%22%3A1%7D", "limit=20", "order=-createDate", "a=1", "a=2", "a", "=x", "",
      "X-NCMB-Timestamp=forged", "Z=1", "count=1", "skip=0", "%E3%81%82=1", "b=%26",
      "SignatureMethod=other", "x=\u{3042}", "é=1",
    ]
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<3_000 {
      let query = (0..<Int.random(in: 0...7, using: &generator)).map { _ in
        pieces.randomElement(using: &generator)!
      }.joined(separator: "&")
      let arguments = (
        method: "GET", host: "127.0.0.1:8443", path: "/2013-09-01/classes/Thread/",
        rawQuery: query, applicationKey: "0123abcd", timestamp: "2026-12-01T08:14:22.203566"
      )
      #expect(
        NCMBSignature.stringToSign(
          method: arguments.method, host: arguments.host, path: arguments.path,
          rawQuery: arguments.rawQuery, applicationKey: arguments.applicationKey,
          timestamp: arguments.timestamp)
          == SignatureStringTests.reference(
            method: arguments.method, host: arguments.host, path: arguments.path,
            rawQuery: arguments.rawQuery, applicationKey: arguments.applicationKey,
            timestamp: arguments.timestamp), "\(query)")
    }
  }
}
