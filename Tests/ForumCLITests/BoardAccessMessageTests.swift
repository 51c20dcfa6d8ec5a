import Datastore
import Foundation
import PostgresTestCluster
import Testing

/// Issue 21: a board that cannot be opened is said whole in the reader's language: under `ja`
/// no English is left but the path, the command to run and a library's own words in parentheses.
@Suite("opening a board, said in Japanese")
struct BoardAccessMessageTests {
  static let ja = "ja_JP.UTF-8"
  /// Two English words in a row.
  static let english = try! NSRegularExpression(pattern: "(?<![-@\\w])[A-Za-z]{2,} [A-Za-z]+")

  /// What is left of `line` once the paths, backquoted commands and the library's words in
  /// parentheses (`library`) are taken out: it must hold no English.
  private func expectJapanese(
    _ result: RunResult, removing words: [String], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    var text = result.stderr
    for word in words { text = text.replacingOccurrences(of: word, with: "") }
    text = text.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
    let found = Self.english.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
    #expect(result.status != 0, "\(result.summary)", sourceLocation: sourceLocation)
    #expect(result.stderrLines.count == 1, "\(result.summary)", sourceLocation: sourceLocation)
    #expect(found == nil, "\(result.summary)", sourceLocation: sourceLocation)
    #expect(
      text.unicodeScalars.contains { $0.value >= 0x3040 }, "\(result.summary)",
      sourceLocation: sourceLocation)
  }

  @Test func sqliteFilesThatAreNoBoard() throws {
    let forum = try ForumFixture()
    let root = forum.root
    let directory = root + "/a-directory"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let garbage = root + "/garbage.sqlite"
    try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: garbage))
    let other = root + "/other.sqlite"
    do {
      let connection = try Connection(path: other)
      try connection.execute("CREATE TABLE songs(title TEXT)")
    }
    let fifo = root + "/fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    let newer = root + "/newer.sqlite"
    #expect(try forum.run(["list"], database: newer).status == 0)
    do {
      let connection = try Connection(path: newer)
      try connection.execute(
        "UPDATE meta SET value = '99' || substr(value, instr(value, ' ')) WHERE key = 'rules'")
    }
    let cases: [(path: String, english: String)] = [
      (root + "/missing/board.sqlite", "directory \(root)/missing does not exist"),
      (directory, "is a directory, not a database file"),
      (garbage, "is not a forum database (not an SQLite file)"),
      (other, "is an SQLite database of another program"),
      (fifo, "is not a regular file (a FIFO, device or socket)"),
      (newer, "was set up by a newer forum (rules 99); upgrade forum"),
    ]
    for item in cases {
      // The English line is what it was.
      let english = try forum.run(["list"], database: item.path)
      #expect(english.stderr.contains(item.english), "\(english.summary)")
      let japanese = try forum.run(["list"], lang: Self.ja, database: item.path)
      expectJapanese(japanese, removing: [item.path, root + "/missing"])
    }
  }

  @Test func postgresServersThatRefuse() throws {
    let forum = try ForumFixture()
    let cluster = try PostgresTestCluster.shared()
    let board = try cluster.board()
    defer { board.remove() }
    // Nobody listens on port 1: libpq's words stay, in parentheses.
    let unreachable = try forum.run(
      ["list"], lang: Self.ja,
      database: "postgresql://127.0.0.1:1/forum?user=alice&connect_timeout=3")
    #expect(
      unreachable.stderr.hasPrefix("forum: PostgreSQL サーバーにつながりません ("), "\(unreachable.summary)")
    expectJapanese(unreachable, removing: [libpqWords(unreachable.stderr)])
    // No schema yet, then a role that is not a member.
    try cluster.admin("GRANT forum_member TO \(board["alice"].name)")
    let noSchema = try forum.run(["list"], lang: Self.ja, database: board["alice"].uri)
    expectJapanese(noSchema, removing: [board.database])
    #expect(try forum.run(["init"], profile: nil, database: board.owner.uri).status == 0)
    let notMember = try forum.run(["list"], lang: Self.ja, database: board["bob"].uri)
    #expect(notMember.status == 3, "\(notMember.summary)")
    expectJapanese(notMember, removing: [board["bob"].name])
  }

  /// The first parenthesized part: libpq's own message.
  private func libpqWords(_ line: String) -> String {
    guard let open = line.firstIndex(of: "("), let close = line.lastIndex(of: ")") else {
      return ""
    }
    return String(line[open...close])
  }
}
