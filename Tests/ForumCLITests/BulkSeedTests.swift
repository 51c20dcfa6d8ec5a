import Foundation
import Testing

/// `forum-bench seed` writes its rows in bulk (issue 20); `--one-by-one yes` posts each thread
/// and comment through the Datastore API instead. The two must make the same board: what
/// every read returns, and what the tables hold, with only what is random or dated told apart
/// (object ids, user names, file names, dates).
@Suite("forum-bench seed: the bulk path makes the board posting one by one makes")
struct BulkSeedTests {
  static func bench() throws -> String {
    let forum = try ForumBinary.require()
    let bench = URL(fileURLWithPath: forum).deletingLastPathComponent()
      .appendingPathComponent("forum-bench").path
    guard FileManager.default.isExecutableFile(atPath: bench) else {
      throw ForumTestError("forum-bench was not built next to \(forum)")
    }
    return bench
  }

  /// Seeds `fixture`'s board with the same command line, one way or the other.
  static func seed(_ fixture: ForumFixture, oneByOne: Bool) throws {
    var arguments = [
      "seed", "--db", fixture.db, "--threads", "24", "--comments", "260", "--big-thread", "45",
      "--image-every", "5", "--batch", "100",
    ]
    if oneByOne { arguments += ["--one-by-one", "yes"] }
    let result = try ForumFixture.launch(
      try bench(), arguments: arguments, environment: fixture.environment(), input: Data(),
      timeout: 300)
    #expect(result.status == 0, "\(result.summary)")
  }

  /// Every read a reader makes of the board, as JSON: each page of the list, each page of every
  /// thread, two searches; then the tables themselves.
  static func reads(_ fixture: ForumFixture) throws -> [String] {
    var reads: [String] = []
    func pages(_ arguments: [String]) throws {
      var page = 1
      while true {
        let result = try fixture.run(["--json"] + arguments + ["--page", String(page)])
        #expect(result.status == 0, "\(result.summary)")
        reads.append(result.stdout)
        guard result.status == 0, (try result.json())["hasMore"] as? Bool == true else { return }
        page += 1
      }
    }
    try pages(["list"])
    for thread in 1...24 { try pages(["show", String(thread)]) }
    for word in ["猫", "keyboard"] {
      let result = try fixture.run(["--json", "search", word])
      #expect(result.status == 0, "\(result.summary)")
      reads.append(result.stdout)
    }
    for sql in [
      "SELECT id, class, readers, writers, json(data) FROM objects ORDER BY id",
      "SELECT * FROM counters ORDER BY name", "SELECT * FROM class_counts ORDER BY class",
      "SELECT seq, class, objectId, kind, parentId, number, readers FROM changes ORDER BY seq",
      "SELECT * FROM sqlite_sequence", "SELECT key FROM meta ORDER BY key",
      "SELECT name, mimeType, fileSize, readers, writers, length(data), hex(substr(data, 1, 64)) "
        + "FROM files ORDER BY rowid",
      "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type <> 'table' ORDER BY name",
      "SELECT rowid FROM search_text('猫') ORDER BY rowid",
      "SELECT count(*) FROM search_text_docsize",
      "PRAGMA integrity_check",
    ] {
      let result = try ForumFixture.launch(
        "/usr/bin/sqlite3", arguments: ["-json", fixture.db, sql], environment: [:],
        input: Data(), timeout: 60)
      #expect(result.status == 0, "\(result.summary)")
      reads.append(sql + "\n" + result.stdout)
    }
    return reads
  }

  /// `text` with what differs by chance between two seeds named by first appearance: object ids
  /// (16 letters and digits), user names (10), image file names; dates and times written as
  /// `<date>`. Consistent over all of a board's reads, so a pointer still names its object.
  static func normalized(_ reads: [String]) -> [String] {
    var names: [String: String] = [:]
    func name(_ value: String) -> String {
      if let known = names[value] { return known }
      let new = "<id\(names.count)>"
      names[value] = new
      return new
    }
    let patterns = [
      #"thread-[0-9a-f-]{36}\.(png|jpg)"#, #"(?<![A-Za-z0-9])[A-Za-z0-9]{16}(?![A-Za-z0-9])"#,
      #"(?<=:\\?")[A-Za-z0-9]{10}(?=\\?")"#,
    ].map { try! NSRegularExpression(pattern: $0) }
    let date = try! NSRegularExpression(
      pattern: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|(?<=[":,])1\d{12}(?=[",}\n])"#)
    return reads.map { read in
      var text = date.stringByReplacingMatches(
        in: read, range: NSRange(read.startIndex..., in: read), withTemplate: "<date>")
      for pattern in patterns {
        let source = text
        var output = ""
        var last = source.startIndex
        for match in pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
          let range = Range(match.range, in: source)!
          output += source[last..<range.lowerBound] + name(String(source[range]))
          last = range.upperBound
        }
        text = output + source[last...]
      }
      return canonical(text)
    }
  }

  /// JSON text with its keys sorted: an ACL's keys are user ids, in the order of the ids.
  static func canonical(_ text: String) -> String {
    let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let (head, body) =
      text.hasPrefix("{") || lines.count < 2 ? ("", text) : (lines[0] + "\n", String(lines[1]))
    guard
      let object = try? JSONSerialization.jsonObject(
        with: Data(body.utf8), options: [.fragmentsAllowed]),
      let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    else { return text }
    return head + String(decoding: sorted, as: UTF8.self)
  }

  @Test func theSameReadsAndTheSameTables() throws {
    let bulk = try ForumFixture()
    let oneByOne = try ForumFixture()
    try Self.seed(bulk, oneByOne: false)
    try Self.seed(oneByOne, oneByOne: true)
    let bulkReads = Self.normalized(try Self.reads(bulk))
    let oneByOneReads = Self.normalized(try Self.reads(oneByOne))
    #expect(bulkReads.count == oneByOneReads.count)
    for (index, (left, right)) in zip(bulkReads, oneByOneReads).enumerated() where left != right {
      // The first line that differs, not the whole read.
      let pair =
        zip(left.split(separator: "\n"), right.split(separator: "\n")).first { $0 != $1 }
        ?? (left[...], right[...])
      Issue.record(
        "read \(index) differs: bulk \(pair.0.prefix(600)), one by one \(pair.1.prefix(600))")
    }
    // Something was read: every thread, its comments, an image, a search hit.
    let all = bulkReads.joined()
    #expect(all.contains("\"commentCount\":45") && all.contains("removedMetadata"))
    #expect(all.contains("猫がかわいい") && all.contains("\"ok\""))
  }

  /// The bulk path draws its object ids eight random bytes at a time (a system call a letter
  /// spent a fifth of the million-post seed in the kernel): each is still 16 letters and digits,
  /// all different, and over a few hundred of them every one of the 62 characters turns up
  /// (a draw that favoured some would leave others out: each is expected about 80 times).
  @Test func seededObjectIdsAreRandomLettersAndDigits() throws {
    let fixture = try ForumFixture()
    try Self.seed(fixture, oneByOne: false)
    let result = try ForumFixture.launch(
      "/usr/bin/sqlite3", arguments: [fixture.db, "SELECT objectId FROM objects"],
      environment: [:], input: Data(), timeout: 60)
    #expect(result.status == 0, "\(result.summary)")
    let ids = result.stdout.split(separator: "\n").map(String.init)
    #expect(ids.count > 280)
    #expect(Set(ids).count == ids.count)
    let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    for id in ids {
      #expect(id.count == 16 && id.allSatisfy(alphabet.contains), "\(id)")
    }
    #expect(Set(ids.joined()) == alphabet)
  }
}
