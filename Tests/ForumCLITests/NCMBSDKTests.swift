import Foundation
import HTTPTestSupport
import HostileImages
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
    let python = try NCMBSDKTests.python()
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    try forum.ok(
      ["new", "--title", "Posted at the prompt", "--description", "from the terminal"])
    let keys = try forum.ok(["keys", "--json"], profile: nil).json()
    let certificate = try ThrowawayCertificate(in: forum.root)
    let server = try ServeProcess(
      forum,
      [
        "--listen", "127.0.0.1:0", "--tls-cert", certificate.certificateFile, "--tls-key",
        certificate.keyFile,
      ])
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

    // The terminal sees the app's thread with its number, author and picture, and its comment.
    let list = try forum.ok(["list"])
    #expect(list.stdout.contains("#2"), "\(list.summary)")
    #expect(list.stdout.contains("Posted from the app"), "\(list.summary)")
    let show = try forum.ok(["show", "2"])
    #expect(show.stdout.contains("[image: "), "\(show.summary)")
    #expect(show.stdout.contains("8×8 PNG"), "\(show.summary)")
    #expect(show.stdout.contains("This one stays"), "\(show.summary)")
    #expect(!show.stdout.contains("A comment from the app"), "the deleted comment is gone")
  }
}
