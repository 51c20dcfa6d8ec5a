import Foundation
import Testing

@_spi(Tools) @testable import Datastore

/// A database with one user, one object and one file, to show that bad input changes nothing.
struct BadInputFixture {
  let store: Datastore
  let client: DatastoreClient
  let object: DataObject
  let before: [String]

  init(_ directory: TemporaryDirectory, fileSizeLimit: Int = 64) throws {
    store = try Datastore(path: directory.file("db.sqlite"), fileSizeLimit: fileSizeLimit)
    let login = try store.loginAnonymously(secret: Datastore.newSecret())
    client = try store.client(sessionToken: login.sessionToken)
    object = try client.create(
      "Thread", fields: ["title": .string("first")], acl: .publicRead(owner: login.user.objectId))
    try client.putFile(
      name: "a.png", bytes: [1, 2, 3], mimeType: "image/png",
      acl: .publicRead(owner: login.user.objectId))
    before = try fingerprint(store)
  }

  func expectUnchanged(sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(try fingerprint(store) == before, sourceLocation: sourceLocation)
  }
}

private struct Boom: Error {}

@Suite("Bad input changes nothing")
struct BadInputTests {
  static let invalidFieldNames = [
    "1abc", "a-b", "a b", "a.b", "_private", "$where", "ünï", "a\u{0}b",
    String(repeating: "x", count: 65),
  ]
  static let reservedFieldNames = ["objectId", "createDate", "updateDate", "acl"]

  @Test(arguments: invalidFieldNames + reservedFieldNames)
  func invalidOrReservedFieldName(_ name: String) throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      let id = fixture.object.objectId
      let error = expectError(.invalid) { try client.create("Thread", fields: [name: .int(1)]) }
      #expect(error?.field == name)
      #expect(error?.message == "\(name) is invalid.")
      expectError(.invalid) { try client.update("Thread", objectId: id, set: [name: .int(1)]) }
      expectError(.invalid) { try client.update("Thread", objectId: id, increment: [name: 1]) }
      try fixture.expectUnchanged()
    }
  }

  @Test func emptyFieldName() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let id = fixture.object.objectId
      let error = expectError(.invalid) {
        try fixture.client.create("Thread", fields: ["": .int(1)])
      }
      #expect(error?.message == "field name is invalid.")
      expectError(.invalid) {
        try fixture.client.update("Thread", objectId: id, set: ["": .int(1)])
      }
      expectError(.invalid) {
        try fixture.client.update(
          "Thread", objectId: id, set: ["title": .string("new"), "": .int(1)])
      }
      try fixture.expectUnchanged()
    }
  }

  @Test func badClassNames() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      let id = fixture.object.objectId
      let empty = expectError(.empty) { try client.create("", fields: ["title": .string("x")]) }
      #expect(empty?.message == "className is empty.")
      expectError(.empty) { try client.get("", objectId: id) }
      expectError(.empty) { try client.find(Query(className: "")) }
      expectError(.empty) { try client.count(Query(className: "")) }
      expectError(.empty) { try client.delete("", objectId: id) }
      for name in ["1Thread", "Thread;DROP", "a b", "Thr/ead", "Thread'"] {
        expectError(.invalid, "\(name)") { try client.create(name, fields: [:]) }
        expectError(.invalid, "\(name)") { try client.find(Query(className: name)) }
      }
      try fixture.expectUnchanged()
    }
  }

  @Test func invalidUTF8() throws {
    let error = expectError(.invalid) { try decodeUTF8([0x61, 0xFF, 0xFE], field: "title") }
    #expect(error?.field == "title")
    #expect(error?.message == "title is invalid.")
    expectError(.invalid) { try decodeUTF8([0xC3], field: "text") }  // truncated sequence
    expectError(.invalid) { try decodeUTF8([0xED, 0xA0, 0x80], field: "text") }  // surrogate
    expectError(.invalid) { try decodeUTF8([0xC0, 0xAF], field: "text") }  // overlong "/"
    #expect(try decodeUTF8(Array("スレッド 🧵".utf8), field: "title") == "スレッド 🧵")
    #expect(try decodeUTF8([], field: "title") == "")
  }

  static let badObjectIds = [
    "ABCDEFGHijklmno", "ABCDEFGHijklmnopq", "ABCDEFGHijklmno/", "ABCDEFGHijklmno'",
    "ABCDEFGHijklmno\"", "ABCDEFGHijklmno ", "ABCDEFGHijklmn%_", "", "ÄBCDEFGHijklmno",
  ]

  @Test(arguments: badObjectIds)
  func objectIdOfTheWrongShape(_ objectId: String) throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      for error in [
        expectError(.invalid) { try client.get("Thread", objectId: objectId) },
        expectError(.invalid) {
          try client.update("Thread", objectId: objectId, set: ["title": .string("x")])
        },
        expectError(.invalid) { try client.delete("Thread", objectId: objectId) },
        expectError(.invalid) { try fixture.store.master.delete("Thread", objectId: objectId) },
      ] {
        #expect(error?.field == "objectId")
      }
      try fixture.expectUnchanged()
    }
  }

  @Test(arguments: [(0, 0), (1001, 0), (-1, 0), (20, -1), (Int.max, 0), (20, Int.min)])
  func badPaging(limit: Int, skip: Int) throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let query = Query(className: "Thread", limit: limit, skip: skip)
      let error = expectError(.invalid) { try fixture.client.find(query) }
      #expect(error?.field == (limit == 20 ? "skip" : "limit"))
      expectError(.invalid) { try fixture.client.count(query) }
      expectError(.invalid) { try fixture.store.master.find(query) }
      // The edges are fine.
      #expect(try fixture.client.find(Query(className: "Thread", limit: 1)).count == 1)
      #expect(try fixture.client.find(Query(className: "Thread", limit: 1000)).count == 1)
      #expect(try fixture.client.find(Query(className: "Thread", skip: 1)).isEmpty)
    }
  }

  @Test func badQueryFields() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      for query in [
        Query(className: "Thread", order: ["title; DROP TABLE objects"]),
        Query(className: "Thread", order: ["-"]), Query(className: "Thread", order: [""]),
        Query(className: "Thread", order: ["a..b"]),
        Query(className: "Thread", equalTo: ["x') OR 1=1 --": .int(1)]),
        Query(className: "Thread", include: ["a.b.c.d"]),
        Query(className: "Thread", include: ["a..b"]),
      ] {
        expectError(.invalid, "\(query)") { try fixture.client.find(query) }
      }
      try fixture.expectUnchanged()
    }
  }

  @Test func fileOverTheLimit() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory, fileSizeLimit: 64)
      let error = expectError(.fileTooLarge) {
        try fixture.client.putFile(
          name: "big.png", bytes: [UInt8](repeating: 7, count: 65), mimeType: "image/png")
      }
      #expect(error?.message == "File size Limit error.")
      expectError(.notFound) { try fixture.store.master.fileInfo(name: "big.png") }
      #expect(try rowCount(fixture.store, "files") == 1)
      try fixture.expectUnchanged()
      // Exactly the limit is accepted.
      let info = try fixture.client.putFile(
        name: "big.png", bytes: [UInt8](repeating: 7, count: 64), mimeType: "image/png")
      #expect(info.fileSize == 64)
      #expect(try fixture.store.master.getFile(name: "big.png").count == 64)
    }
  }

  @Test(arguments: [
    "a/b.png", "../a.png", "..", ".", "/etc/passwd", "", "a b.png", "a\u{0}.png", "画像.png",
    String(repeating: "a", count: 201),
  ])
  func badFileName(_ name: String) throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      let error = expectError(.invalid) {
        try client.putFile(name: name, bytes: [1], mimeType: "image/png")
      }
      #expect(error?.field == "fileName")
      expectError(.invalid) { try client.fileInfo(name: name) }
      expectError(.invalid) { try client.getFile(name: name) }
      expectError(.invalid) { try client.deleteFile(name: name) }
      try fixture.expectUnchanged()
    }
  }

  @Test func otherBadFiles() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      expectError(.empty) { try client.putFile(name: "e.png", bytes: [], mimeType: "image/png") }
      expectError(.invalid) { try client.putFile(name: "m.png", bytes: [1], mimeType: "") }
      expectError(.invalid) { try client.putFile(name: "m.png", bytes: [1], mimeType: "png") }
      // A name already taken is refused and the first file keeps its bytes.
      expectError(.invalid) { try client.putFile(name: "a.png", bytes: [9], mimeType: "image/png") }
      #expect(try client.getFile(name: "a.png") == [1, 2, 3])
      try fixture.expectUnchanged()
    }
  }

  @Test func badValues() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      let id = fixture.object.objectId
      let long = String(repeating: "x", count: DatastoreClient.maximumTextBytes + 1)
      expectError(.invalid) { try client.create("Thread", fields: ["title": .string(long)]) }
      expectError(.invalid) { try client.create("Thread", fields: ["n": .double(.nan)]) }
      expectError(.invalid) { try client.create("Thread", fields: ["n": .double(.infinity)]) }
      expectError(.invalid) {
        try client.create("Thread", fields: ["list": .array([.string("ok"), .double(.nan)])])
      }
      expectError(.invalid) { try client.create("Thread", fields: ["obj": .object(["": .int(1)])]) }
      // Adding to a field that is not a number is refused and changes nothing.
      expectError(.invalid) { try client.update("Thread", objectId: id, increment: ["title": 1]) }
      expectError(.invalid) { try fixture.store.addMember(id, toRole: "bad role") }
      expectError(.invalid) { try fixture.store.addMember("short", toRole: "mods") }
      expectError(.invalid) { try ACL(json: .object(["nobody": .object(["read": .bool(true)])])) }
      expectError(.invalid) { try ACL(json: .object(["*": .object(["read": .string("yes")])])) }
      expectError(.invalid) { try ACL(json: .object(["*": .object(["delete": .bool(true)])])) }
      try fixture.expectUnchanged()
    }
  }

  // MARK: Database files

  @Test func emptyDatabasePath() throws {
    expectError(.empty) { try Datastore(path: "") }
  }

  @Test func databaseInMissingDirectory() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("missing/sub/db.sqlite")
      let error = expectError(.systemError) { try Datastore(path: path) }
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
      #expect(!FileManager.default.fileExists(atPath: directory.file("missing")))
    }
  }

  @Test func databasePathIsADirectory() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("dir.sqlite")
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      let error = expectError(.systemError) { try Datastore(path: path) }
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
    }
  }

  @Test(.disabled(if: getuid() == 0, "root ignores file permissions"))
  func readOnlyDatabase() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      do {
        let store = try Datastore(path: path)
        try store.master.create("Thread", fields: ["title": .string("kept")])
      }
      // Fold the WAL into the main file so that the file alone holds the data.
      do {
        let connection = try Connection(path: path)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
      }
      chmod(path, 0o444)
      defer { chmod(path, 0o644) }
      let before = contents(of: path)
      let error = expectError(.systemError) { try Datastore(path: path) }
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
      #expect(error?.detail?.contains("read-only") == true, "\(String(describing: error))")
      #expect(contents(of: path) == before)
    }
  }

  @Test(arguments: [
    Array("this is not a database, just some text\n".utf8),
    (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) },
    Array("SQLite format 3\u{0}".utf8) + [UInt8](repeating: 0xAB, count: 200),
  ])
  func fileThatIsNotADatabase(_ bytes: [UInt8]) throws {
    try withTemporaryDirectory { directory throws in
      let path = directory.file("notes.txt")
      #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
      let error = expectError(.systemError) { try Datastore(path: path) }
      #expect(error?.message == "System error.")
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
      #expect(contents(of: path) == bytes)
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
    }
  }

  @Test(arguments: [0, 1, 42])
  func databaseOfAnotherProgram(userVersion: Int) throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("other.sqlite")
      do {
        let other = try Connection(path: path)
        try other.execute(
          """
          CREATE TABLE contacts(name TEXT, phone TEXT);
          INSERT INTO contacts VALUES ('Ann', '555-0100');
          PRAGMA user_version = \(userVersion);
          """)
      }
      let before = try #require(contents(of: path))
      let error = expectError(.systemError) { try Datastore(path: path) }
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
      #expect(error?.detail?.contains("another program") == true, "\(String(describing: error))")
      #expect(contents(of: path) == before)
      // Still in its own journal mode: no WAL files appeared next to it.
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["other.sqlite"])
    }
  }

  @Test func reopeningKeepsTheData() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let created = try Datastore(path: path).master.create(
        "Thread", fields: ["title": .string("x")])
      let store = try Datastore(path: path)
      #expect(try store.master.get("Thread", objectId: created.objectId) == created)
      let storage = try #require(store.engine as? SQLiteEngine)
      let mode = try storage.connection.prepare("PRAGMA journal_mode").firstRow { try $0.text(0) }
      #expect(mode == "wal")
    }
  }

  // MARK: Transactions

  @Test func errorInsideTransactionRollsBackObjectAndFile() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory)
      let client = fixture.client
      #expect(throws: Boom.self) {
        try client.transaction {
          try client.create("Thread", fields: ["title": .string("half")])
          try client.putFile(name: "half.png", bytes: [1, 2], mimeType: "image/png")
          try client.update(
            "Thread", objectId: fixture.object.objectId, set: ["title": .string("changed")])
          throw Boom()
        }
      }
      try fixture.expectUnchanged()
      expectError(.notFound) { try client.fileInfo(name: "half.png") }
      #expect(try client.count(Query(className: "Thread")) == 1)
    }
  }

  @Test func datastoreErrorInsideTransactionRollsBackEverything() throws {
    try withTemporaryDirectory { directory in
      let fixture = try BadInputFixture(directory, fileSizeLimit: 8)
      let client = fixture.client
      expectError(.fileTooLarge) {
        try client.transaction {
          try client.create(
            "Thread", fields: ["title": .string("half"), "fileName": .string("b.png")])
          try client.putFile(name: "ok.png", bytes: [1], mimeType: "image/png")
          try client.putFile(
            name: "b.png", bytes: [UInt8](repeating: 1, count: 9), mimeType: "image/png")
        }
      }
      try fixture.expectUnchanged()
      // A nested failure that is caught inside undoes only its own part.
      try client.transaction {
        try client.create("Thread", fields: ["title": .string("kept")])
        expectError(.invalid) {
          try client.transaction {
            try client.create("Thread", fields: ["title": .string("undone")])
            try client.create("Thread", fields: ["objectId": .string("x")])
          }
        }
      }
      let titles = try client.find(Query(className: "Thread", order: ["createDate"]))
        .compactMap { $0["title"]?.stringValue }
      #expect(titles == ["first", "kept"])
    }
  }
}
