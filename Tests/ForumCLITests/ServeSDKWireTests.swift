import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Testing

/// The official NCMB SDKs' requests as their source builds them (`Fixtures/sdk-wire`: one file
/// per SDK, each naming the source it follows), byte for byte on a socket, through the built
/// `forum serve` on both engines: the seed's demo app (Swift_Forum_Demo) call by call through
/// the Swift SDK's requests — its multipart with the epilogue CRLF, its count with `limit=0` —
/// then the JavaScript and Android SDKs' uploads, queries and signatures, and the iOS
/// Objective-C SDK (a device's local time labelled `Z`) and the Unity SDK (its multipart `PUT`
/// of a file's ACL) each with a thread of its own; then the terminal
/// sees the app's thread with its picture, and `--json` writes it field for field as the server
/// did.
@Suite("forum serve: the official SDKs' wire")
struct ServeSDKWireTests {
  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
      "Fixtures"
    ).path

  /// Serves `location`, runs the demo app's flow, and checks what the terminal sees at
  /// `terminal` (nil: the fixture's own database).
  private func check(
    _ forum: ForumFixture, keys: String, location: String, terminal: String? = nil
  ) throws {
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let corpus = ServeSDKWireTests.fixtures + "/corpus"
    let run = try Clients.run(
      "/usr/bin/python3",
      [
        ServeSDKWireTests.fixtures + "/sdk-wire/demo-app.py", String(server.port), keys,
        corpus + "/jpeg/testorig.jpg", corpus + "/png/suite/basn2c08.png",
      ], timeout: 180)
    #expect(server.stop() == 0)
    #expect(server.stderr == "", "\(server.stderr)")
    #expect(run.status == 0, "\(run.summary)")
    let answer = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
      "\(run.summary)")
    let problems = answer["problems"] as? [Any] ?? ["no problems list"]
    #expect(problems.isEmpty, "\(problems)")
    let served = try #require(answer["thread"] as? [String: Any])
    let number = try #require(served["number"] as? Int, "\(served)")

    // The terminal sees the app's thread with its picture.
    let list = try forum.run(["list"], database: terminal ?? forum.db)
    #expect(list.status == 0 && list.stdout.contains("From the demo app"), "\(list.summary)")
    // The iOS and Unity apps' threads (each with a picture) are the board's too.
    #expect(
      list.stdout.contains("From the iOS app") && list.stdout.contains("From the Unity app"),
      "\(list.summary)")
    let show = try forum.run(["--images", "none", "show", String(number)], database: terminal)
    #expect(show.status == 0, "\(show.summary)")
    #expect(show.stdout.contains("with a picture"), "\(show.summary)")
    #expect(show.stdout.contains("image/jpeg") || show.stdout.contains("[image"), "\(show.summary)")
    #expect(show.stdout.contains("Nice picture") && show.stdout.contains("From the web app"))

    // One JSON shape: every field the server wrote, `--json` writes alike; `--json` adds only
    // what it says of the author and of the reader.
    let json = try forum.run(["--json", "show", String(number)], database: terminal)
    let thread = try #require(try json.json()["thread"] as? [String: Any], "\(json.summary)")
    for (field, value) in served {
      #expect(
        thread[field].map { NSDictionary(dictionary: ["v": $0]) }
          == NSDictionary(dictionary: ["v": value]),
        "\(field): server \(value), --json \(thread[field] ?? "nothing")")
    }
    let extra = Set(thread.keys).subtracting(served.keys)
    #expect(extra.isSubset(of: ["displayName", "userName", "unread"]), "\(extra)")
    let lastActivity = served["lastActivity"] as? [String: Any]
    #expect(lastActivity?["__type"] as? String == "Date", "\(served)")
    #expect(served["createDate"] is String && served["updateDate"] is String)
  }

  @Test func theSDKsOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    try check(forum, keys: keys.stdout, location: forum.db)
  }

  @Test func theSDKsOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try board(served)
    try check(
      forum, keys: served.keys, location: served.server.uri, terminal: served.board["alice"].uri)
  }

  /// Issue 34's operators in the SDKs' own bytes (`Fixtures/sdk-wire/operators.py`): GeoPoints
  /// near a point and in a box (Swift, JavaScript, Android), a relation changed by the Swift
  /// SDK's AddRelation/RemoveRelation and found by `$relatedTo` from three SDKs, `$regex`
  /// (Swift keeps `+`, the JavaScript SDK's qs.parse makes it a space), `include` (JavaScript,
  /// Android), the JavaScript SDK's `batch`, and a catastrophic `$regex` while another app is
  /// served; with the GeoPoint field indexed (`forum index geo Spot location`) and without.
  private func operators(_ forum: ForumFixture, keys: String, location: String) throws {
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: location)
    let run = try Clients.run(
      "/usr/bin/python3",
      [ServeSDKWireTests.fixtures + "/sdk-wire/operators.py", String(server.port), keys],
      timeout: 240)
    #expect(server.stop() == 0)
    #expect(run.status == 0, "\(run.summary)")
    let answer = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
      "\(run.summary)")
    let problems = answer["problems"] as? [Any] ?? ["no problems list"]
    #expect(problems.isEmpty, "\(problems)")
  }

  @Test(arguments: [false, true]) func theOperatorsOnSQLite(indexed: Bool) throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    if indexed { try forum.ok(["index", "geo", "Spot", "location"], profile: nil) }
    let keys = try forum.run(["--json", "keys"], profile: nil)
    #expect(keys.status == 0, "\(keys.summary)")
    try operators(forum, keys: keys.stdout, location: forum.db)
  }

  @Test(arguments: [false, true]) func theOperatorsOnPostgreSQL(indexed: Bool) throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    if indexed {
      let made = try forum.run(
        ["index", "geo", "Spot", "location"], profile: nil, database: served.board.owner.uri)
      #expect(made.status == 0, "\(made.summary)")
    }
    try operators(forum, keys: served.keys, location: served.server.uri)
  }

  private func board(_ served: ServedPostgresBoard) throws {
    try served.board.cluster.admin("GRANT forum_member TO \(served.board["alice"].name)")
  }
}
