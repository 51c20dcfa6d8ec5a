import Foundation
import Spawning
import Testing

@testable import Datastore

/// Issue #13: a one-shot command starts like a C tool. No timings here (they live in
/// forum-bench); these are the properties that make the start cheap.
@Suite("start-up")
struct StartupTests {
  /// The Swift runtime and Foundation are linked in (no dynamic loading and relocation of them
  /// at every start), and ICU is not there at all.
  @Test func binaryLinksSwiftStatically() throws {
    let binary = try ForumBinary.require()
    let text = try sharedLibraries(of: binary)
    for library in ["libswift", "libFoundation", "libicu", "FoundationICU", "libdispatch"] {
      #expect(!text.contains(library), "\(binary) loads \(library) at run time:\n\(text)")
    }
    // Nor is full Foundation linked in statically: its ICU data (`icudt76_dat`) is tens of MB.
    let bytes = try Data(contentsOf: URL(fileURLWithPath: binary))
    for name in ["icudt", "NSRegularExpression"] {
      #expect(bytes.range(of: Data(name.utf8)) == nil, "\(binary) contains \(name)")
    }
  }

  /// A start maps the C library and nothing else: SQLite, readline and the runtime's libstdc++
  /// are linked in, the image decoders are opened when a picture is first decoded
  /// (`LazyImageLibraryTests`), and libpq only when a `postgresql://` board is (linked, it would
  /// bring its 37 shared libraries, OpenSSL, Kerberos, LDAP…, into every start).
  /// Each shared library costs a start its mapping, relocations and symbol look-ups: with
  /// libstdc++ alone, `forum --version` ran twice the instructions.
  @Test func binaryLoadsOnlyTheCLibraryAtStart() throws {
    let binary = try ForumBinary.require()
    let text = try sharedLibraries(of: binary)
    let loaded = text.split(separator: "\n").compactMap {
      $0.split(separator: " ").first.map { String($0.trimmingCharacters(in: .whitespaces)) }
    }
    #expect(loaded.contains { $0.hasPrefix("libc.so") }, "ldd lists the libraries: \(text)")
    let allowed = ["linux-vdso.so", "libc.so", "libm.so", "libgcc_s.so", "ld-linux"]
    let others = loaded.filter { name in !allowed.contains { name.contains($0) } }
    #expect(others.isEmpty, "\(binary) loads \(others) at start:\n\(text)")
  }

  private func sharedLibraries(of binary: String) throws -> String {
    let ldd = ChildProcess()
    ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
    ldd.arguments = [binary]
    let output = Pipe()
    ldd.standardOutput = output
    try ldd.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    ldd.waitUntilExit()
    #expect(ldd.terminationStatus == 0, "\(text)")
    return text
  }

  /// A command that changes nothing writes nothing: not the profile, not the database.
  @Test func oneShotReadWritesNothing() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t", "--description", "d"])
    try forum.ok(["list"])
    let files = [forum.profilesDirectory + "/alice.json", forum.db, forum.db + "-wal"]
    func fingerprint() throws -> [String] {
      try files.map { path in
        // The write-ahead log is removed when the last connection closes.
        guard FileManager.default.fileExists(atPath: path) else { return "\(path) absent" }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return "\(path) \(attributes[.size] ?? "?") \(attributes[.modificationDate] ?? "?") "
          + "\(attributes[.systemFileNumber] ?? "?")"
      }
    }
    let before = try fingerprint()
    // Modification times have a clock tick of resolution; a write would land after it.
    usleep(20_000)
    for command in [["list"], ["show", "1"], ["list", "--page", "last"], ["whoami"]] {
      try forum.ok(command)
    }
    #expect(try fingerprint() == before)
  }
}

/// A board set up by a newer forum is refused by an older one, not rewritten: the two would
/// otherwise take turns re-installing their rules at every open (each time rewriting every
/// comment row, seconds on a large board).
@Suite("a newer forum's board")
struct NewerBoardTests {
  @Test func rulesOfANewerForumAreNotReplaced() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "t"])
    do {
      let connection = try Connection(path: forum.db)
      try connection.execute(
        "UPDATE meta SET value = '99' || substr(value, instr(value, ' ')) WHERE key = 'rules'")
    }
    let before = try Data(contentsOf: URL(fileURLWithPath: forum.db))
    let refused = try forum.run(["list"])
    #expect(refused.status != 0)
    #expect(refused.stderr.contains("newer forum (rules 99); upgrade forum"), "\(refused.summary)")
    #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.summary)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: forum.db)) == before)
    // A program reading `--json` errors learns why too, not only "System error.".
    let json = try forum.run(["--json", "list"])
    #expect(json.status != 0)
    #expect(json.stderr.contains(#""detail":"#), "\(json.summary)")
    #expect(json.stderr.contains("newer forum (rules 99); upgrade forum"), "\(json.summary)")
  }
}
