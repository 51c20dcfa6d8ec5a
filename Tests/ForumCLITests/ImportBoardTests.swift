import Foundation
import HTTPTestSupport
import PostgresTestCluster
import Spawning
import Testing

/// `forum import ncmb` of the seed app's own board (NCMBMania's Swift_Forum_Demo, issue 34): its
/// `Thread` (title, description, fileName of a picture) and `Comment` (text, a pointer to its
/// Thread), each with the ACL the app gives (`*` reads, its author writes), become the board's
/// threads and comments: numbered in date order, with their ids, dates and ACLs, counts and last
/// activity, the picture attached; `forum list`/`show` show them and the app reads them through
/// `forum serve` as before. On both engines.
@Suite("forum import ncmb: the app's own board")
struct ImportBoardTests {
  static let userA = "SeedUserA0000001"
  static let userB = "SeedUserB0000002"
  static let anonymousA = "0B7C1E6A-2F4D-4A8B-9C3E-5D6F7A8B9C01"
  static let anonymousB = "7E8F9A0B-1C2D-4E3F-8A9B-0C1D2E3F4A5B"
  static let picture = "5A1F0C2E-0000-4000-8000-000000000001.png"

  static func acl(_ user: String) -> String {
    #"{"*":{"read":true},""# + user + #"":{"read":true,"write":true}}"#
  }

  static func entry(_ id: String, _ date: String, _ user: String, _ fields: String) -> String {
    #"{"objectId":""# + id + #"","createDate":""# + date + #"","updateDate":""# + date
      + #"","acl":"# + acl(user) + "," + fields + "}"
  }

  static func pointer(_ id: String) -> String {
    #"{"__type":"Pointer","className":"Thread","objectId":""# + id + #""}"#
  }

  /// The export as the console and the files tool wrote it: the threads and comments out of
  /// date order, as a class's file may list them.
  static func writeExport(to dir: String) throws {
    try FileManager.default.createDirectory(
      atPath: dir + "/files", withIntermediateDirectories: true)
    func write(_ name: String, _ text: String) throws {
      try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/" + name))
    }
    func user(_ id: String, _ anonymous: String, _ date: String) -> String {
      entry(
        id, date, id,
        #""userName":"u"# + id + #"","authData":{"anonymous":{"id":""# + anonymous + #""}}"#)
    }
    try write(
      "user.json",
      #"{"results":["# + user(userA, anonymousA, "2021-08-06T08:00:00.000Z") + ","
        + user(userB, anonymousB, "2021-08-06T08:30:00.000Z") + "]}")
    try FileManager.default.copyItem(
      atPath: ImportTests.export + "/files/photo.png", toPath: dir + "/files/" + picture)
    try write(
      "files.json",
      #"{"results":[{"fileName":""# + picture + #"","mimeType":"image/png","fileSize":145,"#
        + #""acl":"# + acl(userA) + #","createDate":"2021-08-06T08:59:00.000Z","#
        + #""updateDate":"2021-08-06T08:59:00.000Z"}]}"#)
    try write(
      "Thread.json",
      #"{"results":["#
        + entry(
          "SeedThreadTwo002", "2021-08-10T10:00:00.000Z", userB,
          #""title":"晩ごはん","description":"""#) + ","
        + entry(
          "SeedThreadOne001", "2021-08-06T09:00:00.000Z", userA,
          #""title":"はじめてのスレッド","description":"よろしく","fileName":""# + picture + #"""#)
        + "]}")
    try write(
      "Comment.json",
      #"{"results":["#
        + entry(
          "SeedCommentB0003", "2021-08-07T12:00:00.000Z", userB,
          #""text":"いいですね","thread":"# + pointer("SeedThreadOne001")) + ","
        + entry(
          "SeedCommentA0001", "2021-08-06T09:30:00.000Z", userA,
          #""text":"最初のコメント","thread":"# + pointer("SeedThreadOne001")) + ","
        + entry(
          "SeedCommentA0002", "2021-08-11T08:00:00.000Z", userA,
          #""text":"カレー","thread":"# + pointer("SeedThreadTwo002")) + ","
        + entry(
          "SeedCommentA0004", "2021-08-20T00:00:00.000Z", userA,
          #""text":"また来ます","thread":"# + pointer("SeedThreadOne001")) + "]}")
  }

  static let firstRun = """
    user: imported 2, unchanged 0, refused 0
    files: imported 1, unchanged 0, refused 0
    Thread: imported 2, unchanged 0, refused 0
    Comment: imported 4, unchanged 0, refused 0

    """

  static let secondRun = """
    user: imported 0, unchanged 2, refused 0
    files: imported 0, unchanged 1, refused 0
    Thread: imported 0, unchanged 2, refused 0
    Comment: imported 0, unchanged 4, refused 0

    """

  /// The app's calls (Swift_Forum_Demo's, signed as its SDK signs them) on the imported board.
  static let script =
    SignedClient.prelude + """
      problems = []
      def expect(name, got, want):
          if got != want:
              problems.append([name, got, want])
      A, B = '\(userA)', '\(userB)'
      def anonymous(id):
          status, user, _ = call('POST', 'users', {'authData': {'anonymous': {'id': id}}})
          return status, (user or {}).get('objectId'), (user or {}).get('sessionToken')
      status, a, at = anonymous('\(anonymousA)')
      expect('A signs in as itself', [status, a], [201, A])
      status, b, bt = anonymous('\(anonymousB)')
      expect('B signs in as itself', [status, b], [201, B])
      status, body, _ = call('GET', 'classes/Thread', token=at)
      threads = {t['objectId']: t for t in (body or {}).get('results', [])}
      one = threads.get('SeedThreadOne001', {})
      expect('the threads', [status, sorted(threads)], [200, ['SeedThreadOne001', 'SeedThreadTwo002']])
      expect('thread one', [one.get(k) for k in ['title', 'description', 'fileName', 'createDate',
             'updateDate', 'acl', 'number', 'commentCount']],
             ['はじめてのスレッド', 'よろしく', '\(picture)', '2021-08-06T09:00:00.000Z',
              '2021-08-06T09:00:00.000Z', {'*': {'read': True}, A: {'read': True, 'write': True}},
              1, 3])
      expect('its last activity', one.get('lastActivity'),
             {'__type': 'Date', 'iso': '2021-08-20T00:00:00.000Z'})
      expect('thread two is number 2', threads.get('SeedThreadTwo002', {}).get('number'), 2)
      status, body, _ = call('GET', 'classes/Comment', token=bt, query=where(
          {'thread': {'__type': 'Pointer', 'className': 'Thread', 'objectId': 'SeedThreadOne001'}})
          + '&order=createDate')
      comments = (body or {}).get('results', [])
      expect('its comments', [status, [[c.get('objectId'), c.get('text'), c.get('number'),
             c.get('createDate')] for c in comments]],
             [200, [['SeedCommentA0001', '最初のコメント', 1, '2021-08-06T09:30:00.000Z'],
                    ['SeedCommentB0003', 'いいですね', 2, '2021-08-07T12:00:00.000Z'],
                    ['SeedCommentA0004', 'また来ます', 3, '2021-08-20T00:00:00.000Z']]])
      expect('a comment keeps its acl', [c.get('acl') for c in comments][1:2],
             [{'*': {'read': True}, B: {'read': True, 'write': True}}])
      status, _, raw = call('GET', 'files/\(picture)', token=bt)
      expect('the picture', [status, raw[:8]], [200, b'\\x89PNG\\r\\n\\x1a\\n'])
      status, body, _ = call('DELETE', 'classes/Comment/SeedCommentA0001', token=bt)
      expect('B may not delete A\\'s comment', [status, (body or {}).get('code')], [403, 'E403001'])
      status, body, _ = call('DELETE', 'classes/Thread/SeedThreadOne001', token=bt)
      expect('B may not delete A\\'s thread', [status, (body or {}).get('code')], [403, 'E403001'])
      expect('A deletes its comment',
             call('DELETE', 'classes/Comment/SeedCommentA0001', token=at)[0], 200)
      expect('B deletes its thread',
             call('DELETE', 'classes/Thread/SeedThreadTwo002', token=bt)[0], 200)
      status, body, _ = call('GET', 'classes/Thread/SeedThreadOne001', token=bt)
      expect('one comment less', [status, (body or {}).get('commentCount')], [200, 2])
      print(json.dumps(problems, ensure_ascii=False))
      """

  /// Imports the seed export into `location` twice, checks `forum list`/`show` (through
  /// `member`, a board member's location), then the app's calls through `forum serve`.
  private func check(
    _ forum: ForumFixture, importing location: String, member: String, profile: String,
    serving: String, keys: String, fingerprint: () throws -> [String]
  ) throws {
    let dir = forum.root + "/seed-export"
    try ImportBoardTests.writeExport(to: dir)
    let first = try forum.run(["import", "ncmb", dir], profile: nil, database: location)
    #expect(first.status == 0 && first.stdout == ImportBoardTests.firstRun, "\(first.summary)")
    let imported = try fingerprint()
    let second = try forum.run(["import", "ncmb", dir], profile: nil, database: location)
    #expect(
      second.status == 0 && second.stdout == ImportBoardTests.secondRun, "\(second.summary)")
    #expect(try fingerprint() == imported)

    let list = try forum.run(["--json", "list"], profile: profile, database: member)
    #expect(list.status == 0, "\(list.summary)")
    let threads = try list.json().objects("results")
    #expect(numbers(threads) == [1, 2], "\(list.stdout)")
    #expect(threads.map { $0.int("commentCount") } == [3, 1])
    #expect(
      threads.map { $0.string("createDate") } == [
        "2021-08-06T09:00:00.000Z", "2021-08-10T10:00:00.000Z",
      ])
    #expect(threads.first?.object("image")?.string("mimeType") == "image/png", "\(list.stdout)")
    let text = try forum.run(["list"], profile: profile, database: member)
    let line = text.stdoutLines.first ?? ""
    #expect(line.hasPrefix("#1 ") && line.contains("はじめてのスレッド — よろしく"), "\(text.stdout)")
    let show = try forum.run(["--json", "show", "1"], profile: profile, database: member)
    #expect(show.status == 0, "\(show.summary)")
    let comments = try show.json().objects("results")
    #expect(numbers(comments) == [1, 2, 3], "\(show.stdout)")
    #expect(comments.map { $0.string("text") } == ["最初のコメント", "いいですね", "また来ます"])
    let server = try ServeProcess(forum, ["--listen", "127.0.0.1:0"], database: serving)
    let run = try Clients.python(
      ImportBoardTests.script, [String(server.port), keys], timeout: 180)
    #expect(run.status == 0 && run.stdout == "[]\n", "\(run.summary)")
    #expect(server.stop() == 0)
    // A thread posted now follows the imported ones.
    let posted = try forum.run(
      ["--json", "new", "--title", "after the move"], profile: profile, database: member)
    #expect(try posted.json().int("number") == 3, "\(posted.summary)")
  }

  @Test func theSeedAppsBoardOnSQLite() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let keys = try forum.run(["--json", "keys"], profile: nil)
    try check(
      forum, importing: forum.db, member: forum.db, profile: "carol", serving: forum.db,
      keys: keys.stdout,
      fingerprint: { try forum.importFingerprint() })
  }

  @Test func theSeedAppsBoardOnPostgreSQL() throws {
    let forum = try ForumFixture()
    let served = try ServedPostgresBoard(forum)
    defer { served.board.remove() }
    try served.board.cluster.admin("GRANT forum_member TO \(served.board["alice"].name)")
    try check(
      forum, importing: served.board.owner.uri, member: served.board["alice"].uri,
      profile: "alice", serving: served.server.uri, keys: served.keys,
      fingerprint: { try served.board.importFingerprint() })
  }

  /// A kill -9 after the users' transaction leaves no thread and no comment (they are one
  /// transaction); the next run brings them, numbered as one uninterrupted run numbers them.
  @Test func aKilledImportOfTheBoardIsResumed() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let whole = try ForumFixture()
    try whole.ok(["init"], profile: nil)
    let dir = forum.root + "/seed-export"
    try ImportBoardTests.writeExport(to: dir)
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: forum.binary)
    process.arguments = ["--db", forum.db, "import", "ncmb", dir]
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
    #expect(String(decoding: seen, as: UTF8.self) == "user: imported 2, unchanged 0, refused 0\n")
    let killed = try forum.importFingerprint()
    #expect(!killed.contains { $0.hasPrefix("Thread|") || $0.hasPrefix("Comment|") }, "\(killed)")
    let resumed = try forum.run(["import", "ncmb", dir], profile: nil)
    #expect(
      resumed.status == 0
        && resumed.stdout
          == ImportBoardTests.firstRun.replacing(
            "user: imported 2, unchanged 0", with: "user: imported 0, unchanged 2"),
      "\(resumed.summary)")
    let once = try whole.run(["import", "ncmb", dir], profile: nil)
    #expect(once.status == 0, "\(once.summary)")
    #expect(try forum.importFingerprint() == (try whole.importFingerprint()))
  }

  /// Peak memory does not grow with the export: an app class of 10 MB and one of 50 MB are
  /// imported, each into a fresh board, under `/usr/bin/time` (its `%M`, the peak RSS in KB).
  /// Before streaming the importer held the parsed export, over 3 times the file.
  @Test func peakMemoryDoesNotGrowWithTheExport() throws {
    let forum = try ForumFixture()
    func peak(objects: Int) throws -> Int {
      let dir = forum.root + "/notes\(objects)"
      try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
      var text = #"{"results":["#
      text.reserveCapacity(objects * 1_050)
      let body = String(repeating: "x", count: 900)
      for index in 0..<objects {
        if index > 0 { text += "," }
        text +=
          #"{"objectId":"Note"# + String(format: "%012d", index)
          + #"","createDate":"2021-01-01T00:00:00.000Z","updateDate":"2021-01-01T00:00:00.000Z","#
          + #""text":""# + body + #"","n":"# + String(index) + "}"
      }
      try Data((text + "]}").utf8).write(to: URL(fileURLWithPath: dir + "/Note.json"))
      let db = dir + "/board.sqlite"
      let made = try forum.run(["init"], profile: nil, database: db)
      #expect(made.status == 0, "\(made.summary)")
      let run = try ForumFixture.launch(
        "/usr/bin/time",
        arguments: ["-f", "peak %M", forum.binary, "--db", db, "import", "ncmb", dir],
        environment: forum.environment(), input: Data(), timeout: 600, directory: nil)
      #expect(run.status == 0, "\(run.summary)")
      let line = run.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") } ?? ""
      return Int(line.dropFirst(5)) ?? Int.max
    }
    let small = try peak(objects: 10_000)
    let large = try peak(objects: 50_000)
    // Five times the objects (about 40 MB more JSON): at most 8 MB more memory.
    #expect(large < small + 8 * 1024, "10 MB: \(small) KB, 50 MB: \(large) KB")
  }

  /// A Thread or Comment that is not the board's shape is one line saying how to import it as
  /// the app's own class; a comment whose thread is not exported, or a thread without an
  /// author, one line naming it; nothing is written.
  @Test func whatIsNotTheBoardsIsOneLine() throws {
    let forum = try ForumFixture()
    try forum.ok(["init"], profile: nil)
    let before = try forum.importFingerprint()
    let user = ImportBoardTests.userA
    let cases: [(file: String, text: String, line: String)] = [
      (
        "Comment.json",
        #"{"results":["#
          + ImportBoardTests.entry(
            "SeedCommentX0009", "2021-08-07T12:00:00.000Z", user,
            #""text":"?","thread":"# + ImportBoardTests.pointer("NotExported00001")) + "]}",
        "Comment SeedCommentX0009: its thread NotExported00001 is not in Thread.json"
      ),
      (
        "Comment.json",
        #"{"results":["#
          + ImportBoardTests.entry(
            "SeedCommentX0009", "2021-08-07T12:00:00.000Z", user,
            #""text":"?","thread":"# + ImportBoardTests.pointer("SeedThreadOne001")
              + #","stars":5"#) + "]}",
        "Comment.json: not the board's Comment (stars); import it as the app's own class with "
          + "--rename Comment=AppComment"
      ),
      (
        "Thread.json",
        #"{"results":[{"objectId":"SeedThreadOne001","createDate":"2021-08-06T09:00:00.000Z","#
          + #""updateDate":"2021-08-06T09:00:00.000Z","title":"everyone's"},"#
          + ImportBoardTests.entry(
            "SeedThreadTwo002", "2021-08-10T10:00:00.000Z", user, #""title":"two""#) + "]}",
        "Thread SeedThreadOne001: no author (a user pointer, or one user allowed to write in "
          + "its acl)"
      ),
    ]
    for (index, bad) in cases.enumerated() {
      let dir = forum.root + "/export\(index)"
      try ImportBoardTests.writeExport(to: dir)
      try Data(bad.text.utf8).write(to: URL(fileURLWithPath: dir + "/" + bad.file))
      let run = try forum.run(["import", "ncmb", dir], profile: nil)
      #expect(
        run.status == 1 && run.stdout == ""
          && run.stderr == bad.line
            + "\nforum: import refused: 1 problem above; nothing was written\n",
        "\(run.summary)")
      #expect(try forum.importFingerprint() == before, "\(bad.line)")
    }
  }
}
