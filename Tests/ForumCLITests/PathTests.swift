import Foundation
import Testing

/// Any path works: short relative ones, a trailing slash, `-` for stdout; what cannot hold a
/// database is refused before SQLite opens it.
@Suite("paths")
struct PathTests {
  static let png = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/corpus/png/suite/basn2c08.png").path

  @Test func shortDatabasePathsWork() throws {
    let forum = try ForumFixture()
    let here = forum.root + "/data"
    let short = try forum.run(
      ["new", "--title", "short"], database: "d", directory: here)
    #expect(short.status == 0, "\(short.summary)")
    #expect(FileManager.default.fileExists(atPath: here + "/d"))
    let dotted = try forum.run(["list"], database: "./d", directory: here)
    #expect(dotted.status == 0, "\(dotted.summary)")
    #expect(dotted.stdout.contains("short"))
    let environment = try forum.run(
      ["list"], environment: ["FORUM_DB": "z"], database: "", directory: here)
    #expect(environment.status == 0, "\(environment.summary)")
    #expect(FileManager.default.fileExists(atPath: here + "/z"))

    let slash = try forum.run(["list"], database: "b/", directory: here)
    #expect(slash.status == 1, "\(slash.summary)")
    #expect(slash.stderr == "forum: b/ names a directory, not a database file\n")
  }

  @Test func whatCannotHoldADatabaseIsRefusedBeforeOpening() throws {
    let forum = try ForumFixture()
    let fifo = forum.root + "/fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let journalBefore = FileManager.default.fileExists(atPath: "/dev/null-journal")
    for (path, why) in [
      ("/dev/null", "is not a regular file"), (fifo, "is not a regular file"),
      (forum.root + "/home", "is a directory"),
    ] {
      let result = try forum.run(["list"], timeout: 30, database: path)
      #expect(result.status == 1, "\(result.summary)")
      #expect(result.stderrLines.count == 1)
      #expect(result.stderr.contains(path + " " + why), "\(result.summary)")
    }
    if !journalBefore {
      #expect(!FileManager.default.fileExists(atPath: "/dev/null-journal"))
    }
    #expect(!FileManager.default.fileExists(atPath: forum.root + "/fifo-journal"))
    #expect(!FileManager.default.fileExists(atPath: forum.root + "/fifo-wal"))
  }

  @Test func saveToShortPathsAndToStandardOutput() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "picture", "--image", Self.png])
    let here = forum.root + "/data"
    let saved = try forum.run(["image", "1", "--save", "x"], directory: here)
    #expect(saved.status == 0, "\(saved.summary)")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: here + "/x"))
    #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))

    let piped = try forum.run(["image", "1", "--save", "-"], directory: here)
    #expect(piped.status == 0, "\(piped.summary)")
    #expect(piped.stdoutData == bytes)
    #expect(!FileManager.default.fileExists(atPath: here + "/-"))

    let slash = try forum.run(["image", "1", "--save", "dir/"], directory: here)
    #expect(slash.status == 1, "\(slash.summary)")
    #expect(slash.stderrLines.count == 1)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: here)
    #expect(leftovers.allSatisfy { !$0.hasPrefix(".forum-save") }, "\(leftovers)")
  }
}
