import Foundation
import Spawning
import Testing

/// Issue #10's attack on a shared SQLite board: bob reads what the database file keeps about alice
/// (with the `sqlite3` tool, as anyone who may open the file can) and writes it into a profile of
/// his own. Whatever he copies, he must not become alice.
@Suite("stolen identity")
struct StolenIdentityTests {
  /// Every run of 16 or more letters, digits and dashes in a dump of the whole database file,
  /// blobs included (as hex), both as dumped and lower-cased.
  private func stringsInDatabase(_ forum: ForumFixture) throws -> Set<String> {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", forum.db, ".dump"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let dump = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "sqlite3 .dump failed")
    #expect(dump.contains("INSERT INTO"), "the dump has rows: \(dump.prefix(200))")
    var found: Set<String> = []
    var current = ""
    for character in dump + " " {
      if character.isASCII && (character.isLetter || character.isNumber || character == "-") {
        current.append(character)
      } else {
        if current.count >= 16 { found.formUnion([current, current.lowercased()]) }
        current = ""
      }
    }
    return found
  }

  /// A profile file for `name` that offers `secret` in every place a profile keeps one, for every
  /// key a board could be known by.
  private func writeProfile(
    _ forum: ForumFixture, name: String, secret: String, keys: Set<String>
  ) throws {
    var entries: [String: String] = [:]
    for key in keys { entries[key] = secret }
    let body: [String: Any] = ["uuid": secret, "secrets": entries, "sessions": entries]
    let path = forum.profilesDirectory + "/" + name + ".json"
    try JSONSerialization.data(withJSONObject: body).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
  }

  @Test("strings copied from the database into a profile never act as alice")
  func copiedIdentityCannotDeleteHerThread() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "alice's"])
    try forum.ok(["comment", "1", "bob was here"], profile: "bob")
    let alice = try forum.ok(["--json", "whoami"]).json().string("objectId")
    let strings = try stringsInDatabase(forum)
    #expect(!strings.isEmpty)
    let keys = strings.union([
      forum.db, URL(fileURLWithPath: forum.db).resolvingSymlinksInPath().path,
    ])
    for (index, candidate) in strings.sorted().enumerated() {
      let name = "stolen\(index)"
      try writeProfile(forum, name: name, secret: candidate, keys: keys)
      let whoami = try forum.run(["--json", "whoami"], profile: name)
      if whoami.status == 0 {
        #expect(try whoami.json().string("objectId") != alice, "\(candidate) made bob alice")
      }
      let deleted = try forum.run(["delete", "1", "--yes"], profile: name)
      #expect(deleted.status != 0, "\(candidate) deleted alice's thread: \(deleted.summary)")
    }
    #expect(try forum.storedThreads().map { $0["title"] } == [.string("alice's")])
    #expect(try forum.storedComments().count == 1)
  }

  @Test("a new board file is private to its maker; the group's mode of an existing one is kept")
  func databaseFileModes() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    for suffix in ["", "-wal", "-shm"]
    where FileManager.default.fileExists(atPath: forum.db + suffix) {
      #expect(fileMode(forum.db + suffix) == 0o600, "\(suffix)")
    }
    chmod(forum.db, 0o660)
    try forum.ok(["new", "--title", "second"], profile: "bob")
    #expect(fileMode(forum.db) == 0o660)
  }

  private func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
  }
}
