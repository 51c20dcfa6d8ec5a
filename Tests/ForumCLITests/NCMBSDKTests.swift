import Foundation
import HTTPTestSupport
import HostileImages
import PostgresTestCluster
import Testing

/// The seed app's flows through a real NCMB client nobody here wrote: the `ncmb` package from
/// PyPI (1.3.1), in the virtual environment `.ci/run` makes, against `forum serve` over TLS.
@Suite("NCMB SDK against forum serve")
struct NCMBSDKTests {
  static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  /// The venv's python: `$FORUM_NCMB_PYTHON`, else `.build/ncmb-venv` (made by `.ci/run`).
  static func python() throws -> String {
    let path =
      ProcessInfo.processInfo.environment["FORUM_NCMB_PYTHON"]
      ?? packageDirectory + "/.build/ncmb-venv/bin/python3"
    guard FileManager.default.isExecutableFile(atPath: path) else {
      throw ClientError(
        "\(path) is missing: bash .ci/run makes it (python3 -m venv, pip install ncmb==1.3.1)")
    }
    return path
  }

  @Test func theSeedAppsFlowsOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(
      ["new", "--title", "Posted at the prompt", "--description", "from the terminal"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).json()
    try runSeedApp(forum, keys: keys, server: forum.db, member: forum.db)
  }

  /// The same on PostgreSQL: the owner runs `init` and `keys`, a member posts at the prompt,
  /// and the server connects as a role granted `forum_server`, acting for each app user so
  /// that row-level security decides what they see.
  @Test func theSeedAppsFlowsOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let board = try PostgresTestCluster.shared().board(members: ["alice"])
    defer { board.remove() }
    let initialized = try forum.run(["init"], profile: nil, database: board.owner.uri)
    #expect(initialized.status == 0, "\(initialized.summary)")
    try board.cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let server = try board.cluster.role("server", database: board.database)
    try board.cluster.admin("GRANT forum_member, forum_server TO \(server.name)")
    let posted = try forum.run(
      ["new", "--title", "Posted at the prompt", "--description", "from the terminal"],
      database: board["alice"].uri)
    #expect(posted.status == 0, "\(posted.summary)")
    let keys = try forum.run(["keys", "--json"], profile: nil, database: board.owner.uri)
    #expect(keys.status == 0, "\(keys.summary)")
    let member = try forum.run(["keys", "--json"], profile: nil, database: board["alice"].uri)
    #expect(member.status == 3, "a member never reads the keys: \(member.summary)")
    #expect(!member.stdout.contains(try keys.json().string("clientKey") ?? "?"))
    try runSeedApp(forum, keys: try keys.json(), server: server.uri, member: board["alice"].uri)
  }

  /// Serves `server`, runs `Scripts/ncmb-seed-app.py` against it, then checks what the app saw
  /// and what a member at `member` sees.
  private func runSeedApp(
    _ forum: ForumFixture, keys: [String: Any], server location: String, member: String
  ) throws {
    let python = try NCMBSDKTests.python()
    let certificate = try ThrowawayCertificate(in: forum.root)
    let server = try ServeProcess(
      forum,
      [
        "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile, "--tls-key",
        certificate.keyFile,
      ], database: location)
    defer { _ = server.stop(SIGTERM) }
    let picture = forum.root + "/picture.png"
    try Data(PNGImages.honest(width: 8, height: 8)).write(to: URL(fileURLWithPath: picture))
    let run = try Clients.run(
      "/usr/bin/env",
      [
        "SSL_CERT_FILE=\(certificate.certificateFile)", python,
        NCMBSDKTests.packageDirectory + "/Scripts/ncmb-seed-app.py", "127.0.0.1:\(server.port)",
        keys.string("applicationKey") ?? "", keys.string("clientKey") ?? "", picture,
        "Posted at the prompt",
      ], timeout: 120)
    #expect(run.status == 0, "\(run.summary)")
    let seen = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
      "\(run.summary)")

    #expect(seen.int("todo") == 0, "the session check on Todo finds nothing")
    #expect(seen.int("fileUpload") == 201)
    let appThread = try #require(seen.object("appThread"))
    #expect(appThread.string("title") == "Posted from the app")
    #expect(appThread.int("number") == 2)
    #expect(appThread.object("user")?.string("objectId") != nil)
    let terminal = try #require(seen.object("terminalThread"), "the app sees the prompt's thread")
    #expect(terminal.string("description") == "from the terminal")
    #expect(terminal.int("number") == 1)
    #expect(numbers(seen.objects("comments")) == [1])
    #expect(seen.object("refusedDelete")?.string("code") == "E403001")
    #expect(seen.int("commentsAfterDelete") == 0)
    #expect(seen.int("count") == 1)
    #expect(seen["fileBack"] as? Bool == true)
    // The file search (GET /files) through the SDK: the picture by name; a private file for its
    // owner only.
    let pictureName = try #require(seen.string("pictureName"))
    let hidden = try #require(seen.string("privateName"))
    #expect(seen.int("privateUpload") == 201)
    let found = seen.objects("fileSearch")
    #expect(found.count == 1, "\(found)")
    #expect(found.first?.string("fileName") == pictureName)
    #expect(found.first?.int("fileSize") == seen.int("pictureSize"))
    #expect(found.first?.string("mimeType") == "image/png")
    #expect(seen["bobsFiles"] as? [String] == [pictureName])
    #expect(seen["alicesFiles"] as? [String] == [pictureName, hidden].sorted())

    // The terminal sees the app's thread with its number, author and picture, and its comment.
    let list = try forum.run(["list"], database: member)
    #expect(list.status == 0, "\(list.summary)")
    #expect(list.stdout.contains("#2"), "\(list.summary)")
    #expect(list.stdout.contains("Posted from the app"), "\(list.summary)")
    let show = try forum.run(["show", "2"], database: member)
    #expect(show.status == 0, "\(show.summary)")
    #expect(show.stdout.contains("[image: "), "\(show.summary)")
    #expect(show.stdout.contains("8×8 PNG"), "\(show.summary)")
    #expect(show.stdout.contains("This one stays"), "\(show.summary)")
    #expect(!show.stdout.contains("A comment from the app"), "the deleted comment is gone")
  }
}
