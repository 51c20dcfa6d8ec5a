import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Spawning
import Testing

@testable import Datastore

/// `forum import ncmb DIR` (issue 34) through the built binary, then the imported app through
/// `forum serve` in the SDKs' own bytes (`Fixtures/sdk-wire/import-app.py`), on both engines:
/// imported anonymous users sign in with their old ids (Swift, Android) and A deletes its own
/// post, others are refused; GET returns the exported values; geo, `$relatedTo` and `$regex`
/// queries on the imported data answer as NCMB documents; a catastrophic `$regex` is refused
/// (SQLite), cut off, or answered rightly by a regex engine that does not backtrack
/// (PostgreSQL) while another client is served; a second run changes nothing; bad input is one
/// line and writes nothing.
@Suite("forum import ncmb")
struct ImportTests {
  static let export = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/ncmb-export").path

  static let expectedFirstRun = """
    user: imported 3, unchanged 0, refused 0
    role: imported 2, unchanged 0, refused 0
    files: imported 1, unchanged 0, refused 0
    Post: imported 3, unchanged 0, refused 0
    Shop: imported 2, unchanged 0, refused 0
    AppThread: imported 1, unchanged 0, refused 0
    installation.json: not imported (push notifications and installations are not supported)
    need a new password: taro (TaroPassword0003): NCMB's password hashes cannot be used

    """

  static let expectedSecondRun = """
    user: imported 0, unchanged 3, refused 0
    role: imported 0, unchanged 2, refused 0
    files: imported 0, unchanged 1, refused 0
    Post: imported 0, unchanged 3, refused 0
    Shop: imported 0, unchanged 2, refused 0
    AppThread: imported 0, unchanged 1, refused 0
    installation.json: not imported (push notifications and installations are not supported)
    need a new password: taro (TaroPassword0003): NCMB's password hashes cannot be used

    """

  /// Imports the fixture (refused first without --rename, nothing written), again (unchanged),
  /// then serves `serveLocation` and runs the app's checks.
  private func check(
    _ forum: ForumFixture, importing location: String, serving serveLocation: String,
    keys: String, fingerprint: () throws -> [String]
  ) throws {
    let before = try fingerprint()
    let refused = try forum.run(
      ["import", "ncmb", ImportTests.export], profile: nil, database: location)
    #expect(refused.status == 1, "\(refused.summary)")
    #expect(refused.stdout == "")
    #expect(
      refused.stderr
        == "Thread.json: not the board's Thread (category); import it as the app's own class "
        + "with --rename Thread=AppThread\nforum: import refused: 1 problem above; nothing was "
        + "written\n", "\(refused.stderr)")
    #expect(try fingerprint() == before)
    let arguments = ["import", "ncmb", ImportTests.export, "--rename", "Thread=AppThread"]
    let first = try forum.run(arguments, profile: nil, database: location)
    #expect(first.status == 0 && first.stdout == ImportTests.expectedFirstRun, "\(first.summary)")
    let imported = try fingerprint()
    let second = try forum.run(arguments, profile: nil, database: location)
    #expect(
      second.status == 0 && second.stdout == ImportTests.expectedSecondRun, "\(second.summary)")
    #expect(try fingerprint() == imported)
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: serveLocation)
    // What the app sees, in the Swift, JavaScript and Android SDKs' own requests.
    let run = try Clients.run(
      "/usr/bin/python3",
      [ServeSDKWireTests.fixtures + "/sdk-wire/import-app.py", String(server.port), keys],
      timeout: 240)
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
  }

  @Test func anExportOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    try check(
      forum, importing: forum.db, serving: forum.db, keys: keys.stdout,
      fingerprint: { try forum.importFingerprint() })
  }

  @Test func anExportOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    let owner = served.board.owner.uri
    try check(
      forum, importing: owner, serving: served.server.uri, keys: served.keys,
      fingerprint: { try served.board.importFingerprint() })
    // A member cannot import: only the schema's owner.
    let member = try forum.run(
      ["import", "ncmb", ImportTests.export, "--rename", "Thread=AppThread"], profile: nil,
      database: served.board.members["alice"]!.uri)
    #expect(member.status == 3, "\(member.summary)")
  }

  /// Each bad input: one line naming it, exit 1, nothing written.
  @Test func badInputIsOneLineAndWritesNothing() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try forum.importFingerprint()
    let good =
      #"{"objectId":"GoodObject000001","createDate":"2021-01-01T00:00:00.000Z","#
      + #""updateDate":"2021-01-01T00:00:00.000Z","name":"ok"}"#
    func entry(_ id: String) -> String {
      #"{"objectId":""# + id + #"","createDate":"2021-01-01T00:00:00.000Z","#
        + #""updateDate":"2021-01-01T00:00:00.000Z"}"#
    }
    let cases: [(files: [String: String], line: String)] = [
      (["Item.json": #"{"results":[{"objectId":"#], "Item.json: not valid JSON (UTF-8)"),
      (
        ["Item.json": #"{"results":{"objectId":"x"}}"#],
        #"Item.json: not an export ({"results":[…]} expected)"#
      ),
      (["Item.json": #"{"results":[1]}"#], "Item.json #1: not an object"),
      (["Item.json": #"{"results":["# + entry("short") + "]}"], "Item short: objectId"),
      (["Item.json": #"{"results":[{"name":"no id"}]}"#], "Item.json #1: no objectId"),
      (
        [
          "Item.json": #"{"results":["# + entry("Same000000000001") + ","
            + entry("Same000000000001") + "]}"
        ],
        "Item.json: Same000000000001 appears twice"
      ),
      (
        [
          "Item.json": #"{"results":[{"objectId":"Bad0000000000001","createDate":"yesterday","#
            + #""updateDate":"2021-01-01T00:00:00.000Z"}]}"#
        ],
        "Item.json Bad0000000000001: createDate is invalid: not a date yyyy-MM-ddTHH:mm:ss.SSSZ"
      ),
      (
        [
          "Item.json":
            #"{"results":[{"objectId":"Bad0000000000001","createDate":"2021-01-01T00:00:00.000Z","#
            + #""updateDate":"2021-01-01T00:00:00.000Z","acl":{"*":{"read":"yes"}}}]}"#
        ],
        "Item.json Bad0000000000001: acl is invalid: bad flag read"
      ),
      (
        ["files.json": #"{"results":[{"fileName":"gone.png","mimeType":"image/png"}]}"#],
        "files/gone.png: missing or not a regular file"
      ),
      (
        ["files.json": #"{"results":[{"fileName":"../Item.json","mimeType":"image/png"}]}"#],
        "files.json ../Item.json: the name leads outside the files folder"
      ),
      (
        [
          "files.json": #"{"results":[{"fileName":"big.png","mimeType":"image/png"}]}"#,
          "files/big.png": String(repeating: "x", count: 5 * 1024 * 1024 + 1),
        ],
        "files/big.png: 5242881 bytes, over the limit of 5242880"
      ),
      (
        [
          "files.json": #"{"results":[{"fileName":"text.png","mimeType":"image/png"}]}"#,
          "files/text.png": "not a picture",
        ],
        "files.json text.png: file is invalid: "
      ),
    ]
    for (index, bad) in cases.enumerated() {
      let dir = forum.root + "/export\(index)"
      try FileManager.default.createDirectory(
        atPath: dir + "/files", withIntermediateDirectories: true)
      // A good class beside the bad input: not written either.
      try Data(#"{"results":[\#(good)]}"#.utf8).write(to: URL(fileURLWithPath: dir + "/Good.json"))
      for (name, text) in bad.files {
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/" + name))
      }
      let run = try forum.run(["import", "ncmb", dir], profile: nil)
      let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false)
      #expect(run.status == 1 && run.stdout == "" && lines.count == 3, "\(run.summary)")
      #expect(lines.first?.hasPrefix(bad.line) == true, "\(bad.line) / \(run.stderr)")
      #expect(
        lines.dropFirst().first == "forum: import refused: 1 problem above; nothing was written")
      #expect(try forum.importFingerprint() == before, "\(bad.line)")
    }
  }

  /// A link in `files/` leading out of it is refused like `../`, whatever it points at.
  @Test func aLinkOutOfTheFilesFolderIsRefused() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try forum.importFingerprint()
    let dir = forum.root + "/linked"
    try FileManager.default.createDirectory(
      atPath: dir + "/files", withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: ImportTests.export + "/files/photo.png", toPath: forum.root + "/outside.png")
    try FileManager.default.createSymbolicLink(
      atPath: dir + "/files/link.png", withDestinationPath: forum.root + "/outside.png")
    try Data(#"{"results":[{"fileName":"link.png","mimeType":"image/png"}]}"#.utf8).write(
      to: URL(fileURLWithPath: dir + "/files.json"))
    let run = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(run.status == 1, "\(run.summary)")
    #expect(
      run.stderr == "files.json link.png: the name leads outside the files folder\n"
        + "forum: import refused: 1 problem above; nothing was written\n")
    #expect(try forum.importFingerprint() == before)
  }

  /// A kill -9 between two classes' transactions leaves whole classes; the next run imports
  /// the rest and the board ends as one uninterrupted run leaves it.
  @Test func aKilledImportIsResumedOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let whole = try ForumFixture()
    try whole.ok(["init"], profile: nil)
    try killAndResume(
      forum, location: forum.db, fingerprint: { try forum.importFingerprint() },
      whole: whole.db, wholeFingerprint: { try whole.importFingerprint() })
  }

  @Test func aKilledImportIsResumedOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board(members: [])
    defer { board.remove() }
    let other = try PostgresTestCluster.shared().board(members: [])
    defer { other.remove() }
    for target in [board, other] {
      let made = try forum.run(["init"], profile: nil, database: target.owner.uri)
      #expect(made.status == 0, "\(made.summary)")
    }
    try killAndResume(
      forum, location: board.owner.uri, fingerprint: { try board.importFingerprint() },
      whole: other.owner.uri, wholeFingerprint: { try other.importFingerprint() })
  }

  /// Kills the import at `location` after its first line (the users' transaction committed),
  /// checks that whole classes are there and no more, runs it again, and compares the board with
  /// one imported in one run at `whole`.
  private func killAndResume(
    _ forum: ForumFixture, location: String, fingerprint: () throws -> [String],
    whole: String, wholeFingerprint: () throws -> [String]
  ) throws {
    let arguments = ["import", "ncmb", ImportTests.export, "--rename", "Thread=AppThread"]
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: forum.binary)
    process.arguments = ["--db", location] + arguments
    process.environment = forum.environment(extra: ["FORUM_IMPORT_TEST_PAUSE": "60"])
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    var seen = Data()
    while !seen.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      seen += chunk
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    #expect(String(decoding: seen, as: UTF8.self) == "user: imported 3, unchanged 0, refused 0\n")
    let killed = try fingerprint()
    #expect(killed.contains { $0.hasPrefix("user|AnonUserA0000001|") })
    #expect(!killed.contains { $0.hasPrefix("role|") || $0.hasPrefix("Post|") }, "\(killed)")
    let resumed = try forum.run(arguments, profile: nil, database: location)
    #expect(
      resumed.status == 0
        && resumed.stdout
          == ImportTests.expectedFirstRun.replacing(
            "user: imported 3, unchanged 0", with: "user: imported 0, unchanged 3"),
      "\(resumed.summary)")
    let once = try forum.run(arguments, profile: nil, database: whole)
    #expect(once.status == 0, "\(once.summary)")
    #expect(try fingerprint() == (try wholeFingerprint()))
  }
}

extension ForumFixture {
  /// The rows an import writes, as text (objects, files, identities, role members).
  func importFingerprint() throws -> [String] {
    try fingerprint(of: [
      ("SELECT class, objectId, createDate, updateDate, readers, writers, data FROM objects", 7),
      ("SELECT name, mimeType, fileSize, createDate, updateDate, readers, hex(data) FROM files", 7),
      ("SELECT hex(secretHash), userId FROM identities", 2),
      ("SELECT role, userId FROM role_members", 2),
    ])
  }
}

extension PostgresTestBoard {
  /// The rows an import writes, as text, read by the cluster's superuser.
  func importFingerprint() throws -> [String] {
    let tables = [
      "SELECT class, object_id, create_date, update_date, readers, writers, data FROM forum.objects",
      "SELECT class, object_id, create_date, update_date, readers, writers, data FROM forum.private_objects",
      "SELECT name, mime_type, file_size, create_date, readers, md5(data) FROM forum.files",
      "SELECT name, mime_type, file_size, create_date, readers, md5(data) FROM forum.private_files",
      "SELECT encode(secret_hash, 'hex'), user_id FROM forum.app_identities",
      "SELECT role, user_id FROM forum.app_role_members",
    ]
    var rows: [String] = []
    for sql in tables {
      rows.append(sql)
      rows += try cluster.admin(sql + " ORDER BY 1, 2", database: database)
        .split(separator: "\n").map(String.init)
    }
    return rows
  }
}
