import EngineTestSupport
import Foundation
import PostgresTestCluster
import Testing

@testable import Datastore
@testable import Forum

/// A database on one engine and a profile directory shared by the boards of one test.
final class BoardWorld {
  let database: TestDatabase
  let root: String

  init(_ engine: any EngineFixture) throws {
    database = try engine.makeDatabase(rules: Board.rules, indexes: Board.indexes)
    root = try makeTemporaryDirectory("BoardTests")
  }

  deinit { try? FileManager.default.removeItem(atPath: root) }

  /// The board as `profile` sees it; the same profile is the same user every time.
  func board(_ profile: String) throws -> Board {
    try Board(
      location: try database.location(as: profile), profile: profile,
      profiles: ProfileStore(directory: root + "/profiles"))
  }

  /// The board as its owner sees it. On SQLite (directly or through a server) the owner is the
  /// first user, so this comes before anyone else's board; on PostgreSQL the owner is a member
  /// of `forum_owner`. A PostgreSQL-backed server makes none of its app users the owner: there
  /// the owner works on the database itself, with that role.
  func ownerBoard(_ profile: String = "owner") throws -> Board {
    let postgres = database.backing ?? database
    guard postgres.engine == PostgresFixture().description else { return try board(profile) }
    let location = try postgres.location(as: profile)
    try BoardWorld.grantBoardOwner(to: location)
    return try Board(
      location: location, profile: profile, profiles: ProfileStore(directory: root + "/profiles"))
  }

  /// Makes the role that connects to `location` a member of `forum_owner`.
  static func grantBoardOwner(to location: String) throws {
    let connection = try PostgresConnection(uri: location)
    let role = try #require(try connection.query("SELECT session_user::text").text(0, 0))
    _ = try PostgresTestCluster.shared().admin(
      """
      DO $$ BEGIN CREATE ROLE forum_owner NOLOGIN;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
      GRANT forum_owner TO \(role)
      """)
  }

  /// The store as its owner sees it, past every ACL, to check what a test cannot see as a user.
  func inspector() throws -> DatastoreClient {
    try Datastore.open(database.ownerLocation).master
  }
}

/// Expects a `DatastoreError` with `code` from `body`.
private func expectError(
  _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
  do {
    try body()
    Issue.record("expected \(code.rawValue), nothing was thrown", sourceLocation: sourceLocation)
  } catch let error as DatastoreError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
  } catch {
    Issue.record("expected \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
  }
}

/// A stand-in image: Board stores whatever bytes it is handed.
private let tinyImage = PreparedImage(
  format: .png, width: 1, height: 1, orientation: 1,
  data: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4]), removedMetadata: [])

@Suite("Board")
struct BoardTests {
  @Test(arguments: EngineFixtures.withRemote)
  func threadNumbersAreStableAndNeverReused(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let numbers = try (1...3).map {
      try alice.createThread(title: "t\($0)", description: "", image: nil).number
    }
    #expect(numbers == [1, 2, 3])
    try alice.deleteThread(3)
    try alice.deleteThread(2)
    #expect(try alice.createThread(title: "t4", description: "", image: nil).number == 4)
    // Another process (another Board on the same file) continues the same sequence.
    let bob = try world.board("bob")
    #expect(try bob.createThread(title: "t5", description: "", image: nil).number == 5)
    #expect(try alice.threads(page: 1).items.map(\.number) == [5, 4, 1])
    expectError(.notFound) { _ = try alice.thread(2) }
    expectError(.invalid) { _ = try alice.thread(0) }
  }

  @Test(arguments: EngineFixtures.withRemote)
  func commentNumbersCountPerThreadAndAreNeverReused(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "a", description: "", image: nil)
    try alice.createThread(title: "b", description: "", image: nil)
    #expect(try alice.addComment(to: 1, text: "1/1").number == 1)
    #expect(try bob.addComment(to: 2, text: "2/1").number == 1)
    #expect(try bob.addComment(to: 1, text: "1/2").number == 2)
    #expect(try alice.addComment(to: 1, text: "1/3").number == 3)
    try alice.deleteComment(3, inThread: 1)
    #expect(try alice.addComment(to: 1, text: "1/4").number == 4)

    let thread = try alice.thread(1)
    let comments = try alice.comments(of: thread, page: 1).items
    #expect(comments.map(\.number) == [1, 2, 4])
    #expect(comments.map(\.text) == ["1/1", "1/2", "1/4"])
    #expect(comments.map(\.isMine) == [true, false, true])
    #expect(comments.allSatisfy { $0.threadNumber == 1 })
    #expect(thread.commentCount == 3)
    #expect(try alice.comment(2, inThread: 1).authorId == bob.me.objectId)
    expectError(.notFound) { _ = try alice.comment(3, inThread: 1) }
    expectError(.notFound) { _ = try alice.comment(2, inThread: 2) }
  }

  @Test(arguments: EngineFixtures.withRemote)
  func commentsPageTwentyAtATimeOldestFirst(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    try alice.createThread(title: "busy", description: "", image: nil)
    for index in 1...41 { try alice.addComment(to: 1, text: "c\(index)") }
    let thread = try alice.thread(1)
    #expect(Board.lastPage(commentCount: thread.commentCount) == 3)
    #expect(Board.lastPage(commentCount: 0) == 1)
    #expect(Board.lastPage(commentCount: 20) == 1)
    let pages = try (1...3).map { try alice.comments(of: thread, page: $0) }
    #expect(pages.map { $0.items.count } == [20, 20, 1])
    #expect(pages.map(\.hasMore) == [true, true, false])
    #expect(pages[0].items.first?.text == "c1")
    #expect(pages[2].items.first?.text == "c41")
    expectError(.invalid) { _ = try alice.comments(of: thread, page: 0) }
  }

  /// Pages are found by comment number while no comment was deleted and by offset after: both
  /// give every page the 20 surviving comments that follow the pages before it.
  @Test(arguments: EngineFixtures.withRemote)
  func commentPagesAreTheSameBySeekAndByOffset(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    try alice.createThread(title: "busy", description: "", image: nil)
    for index in 1...45 { try alice.addComment(to: 1, text: "c\(index)") }
    func pages(_ count: Int) throws -> [[Int]] {
      let thread = try alice.thread(1)
      return try (1...count).map { try alice.comments(of: thread, page: $0).items.map(\.number) }
    }
    func chunks(_ numbers: [Int]) -> [[Int]] {
      stride(from: 0, to: numbers.count, by: 20).map {
        Array(numbers[$0..<min($0 + 20, numbers.count)])
      }
    }
    #expect(try pages(3) == chunks(Array(1...45)))
    #expect(try alice.comments(of: alice.thread(1), page: 4).items.isEmpty)
    for number in [3, 30] { try alice.deleteComment(number, inThread: 1) }
    #expect(try pages(3) == chunks(Array(1...45).filter { $0 != 3 && $0 != 30 }))
    try alice.addComment(to: 1, text: "c46")
    #expect(try pages(3) == chunks(Array(1...46).filter { $0 != 3 && $0 != 30 }))
  }

  /// A back-half list page read from the oldest end (when the count is known) is the same page.
  @Test(arguments: EngineFixtures.withRemote)
  func threadPagesAreTheSameFromEitherEnd(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    for index in 1...45 { try alice.createThread(title: "t\(index)", description: "", image: nil) }
    try alice.addComment(to: 7, text: "bump")
    let total = try alice.threadCount()
    #expect(total == 45)
    for page in 1...4 {
      let plain = try alice.threads(page: page)
      let counted = try alice.threads(page: page, total: total)
      #expect(counted.items.map(\.number) == plain.items.map(\.number), "page \(page)")
      #expect(counted.hasMore == plain.hasMore, "page \(page)")
    }
    #expect(try alice.threads(page: 3, total: total).items.map(\.number) == [5, 4, 3, 2, 1])
  }

  @Test(arguments: EngineFixtures.withRemote)
  func anotherUsersCommentUpdatesCountAndActivity(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let created = try alice.createThread(title: "alice's", description: "", image: nil)
    try alice.createThread(title: "newer", description: "", image: nil)
    #expect(try alice.threads(page: 1).items.map(\.number) == [2, 1])
    usleep(5_000)  // so the comment's time is later than the newer thread's

    // Bob may not write alice's thread, but commenting on it still does the bookkeeping.
    let comment = try bob.addComment(to: 1, text: "hi alice")
    #expect(comment.isMine)
    #expect(comment.authorId == bob.me.objectId)
    let thread = try alice.thread(1)
    #expect(thread.commentCount == 1)
    #expect(thread.lastActivity > created.lastActivity)
    #expect(abs(thread.lastActivity - comment.createDate) < 1000)
    #expect(thread.authorId == alice.me.objectId)
    #expect(thread.title == "alice's")
    #expect(try alice.threads(page: 1).items.map(\.number) == [1, 2])
    // The thread's ACL is untouched: bob still cannot change or delete it.
    expectError(.noAccess) { try bob.deleteThread(1) }
    expectError(.noAccess) {
      try bob.client.update("Thread", objectId: thread.objectId, set: ["title": .string("mine")])
    }

    // Deleting a comment brings the count down, whoever wrote the thread.
    try bob.deleteComment(1, inThread: 1)
    #expect(try alice.thread(1).commentCount == 0)
  }

  @Test(arguments: EngineFixtures.withRemote)
  func deletingAThreadTakesItsCommentsAndImageInOneGo(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    let thread = try alice.createThread(title: "with image", description: "d", image: tinyImage)
    let image = try #require(thread.image)
    #expect(image.format == .png)
    #expect(image.byteCount == tinyImage.data.count)
    #expect(try alice.imageBytes(of: thread) == [UInt8](tinyImage.data))
    try alice.createThread(title: "other", description: "", image: nil)
    try alice.addComment(to: 1, text: "one")
    try bob.addComment(to: 1, text: "two")
    try bob.addComment(to: 2, text: "stays")

    // Someone else's thread: refused, nothing goes.
    expectError(.noAccess) { try bob.deleteThread(1) }
    #expect(try alice.thread(1).commentCount == 2)
    let master = try world.inspector()
    #expect(try master.fileInfo(name: image.fileName).fileSize == image.byteCount)

    try alice.deleteThread(1)
    expectError(.notFound) { _ = try alice.thread(1) }
    expectError(.notFound) { _ = try master.fileInfo(name: image.fileName) }
    let comments = try master.find(Query(className: "Comment", limit: 100))
    #expect(comments.map { $0["text"] } == [.string("stays")])
    #expect(try master.find(Query(className: "Thread")).count == 1)
  }

  @Test(arguments: EngineFixtures.withRemote)
  func aFailedDeleteLeavesEverythingInPlace(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let bob = try world.board("bob")
    try alice.createThread(title: "t", description: "", image: tinyImage)
    try alice.addComment(to: 1, text: "alice's comment")
    expectError(.noAccess) { try bob.deleteComment(1, inThread: 1) }
    expectError(.notFound) { try bob.deleteComment(9, inThread: 1) }
    expectError(.notFound) { try alice.deleteThread(9) }
    let thread = try alice.thread(1)
    #expect(thread.commentCount == 1)
    #expect(try alice.comments(of: thread, page: 1).items.map(\.text) == ["alice's comment"])
  }

  @Test(arguments: EngineFixtures.withRemote)
  func threadsPageTwentyAtATime(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    for index in 1...21 { try alice.createThread(title: "t\(index)", description: "", image: nil) }
    let first = try alice.threads(page: 1)
    #expect(first.items.count == 20)
    #expect(first.hasMore)
    #expect(first.items.first?.number == 21)
    let second = try alice.threads(page: 2)
    #expect(second.items.map(\.number) == [1])
    #expect(!second.hasMore)
    #expect(try alice.threads(page: 3).items.isEmpty)
    expectError(.invalid) { _ = try alice.threads(page: 0) }
  }

  @Test(arguments: EngineFixtures.withRemote)
  func jsonCarriesTheBoardsFieldsAndNotItsBookkeeping(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    _ = try alice.rename(to: "Alice")
    let thread = try alice.createThread(title: "t", description: "d", image: nil)
    let fields = try #require(thread.json.objectValue)
    #expect(fields["number"] == .int(1))
    #expect(fields["commentCount"] == .int(0))
    #expect(fields["displayName"] == .string("Alice"))
    #expect(fields["lastCommentNumber"] == nil)
    #expect(fields["objectId"] == .string(thread.objectId))
    #expect(fields["acl"] != nil)
    let comment = try alice.addComment(to: 1, text: "c")
    let commentFields = try #require(comment.json.objectValue)
    #expect(commentFields["number"] == .int(1))
    #expect(commentFields["displayName"] == .string("Alice"))
    #expect(commentFields["thread"]?.pointerId == thread.objectId)
  }

  @Test(arguments: EngineFixtures.withRemote)
  func renameKeepsTheSameUser(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    let id = alice.me.objectId
    #expect(alice.me.displayName == alice.me.userName)
    let renamed = try alice.rename(to: "  Alice  ")
    #expect(renamed.displayName == "Alice")
    #expect(alice.me.displayName == "Alice")
    let again = try world.board("alice")
    #expect(again.me.objectId == id)
    #expect(again.me.displayName == "Alice")
    expectError(.invalid) { _ = try alice.rename(to: String(repeating: "n", count: 41)) }
    expectError(.empty) { _ = try alice.rename(to: " ") }
    #expect(try alice.rename(to: String(repeating: "名", count: 40)).displayName.count == 40)
  }
}

@Suite("PostRules")
struct PostRulesTests {
  @Test func titles() throws {
    #expect(try PostRules.title("  hello  ") == "hello")
    #expect(try PostRules.title(String(repeating: "t", count: 200)).count == 200)
    #expect(try PostRules.title(String(repeating: "字", count: 200)).count == 200)
    #expect(try PostRules.title("tab\there") == "tab\there")
    expectError(.invalid) { _ = try PostRules.title(String(repeating: "t", count: 201)) }
    expectError(.empty) { _ = try PostRules.title("") }
    expectError(.empty) { _ = try PostRules.title(" \t \n ") }
    expectError(.invalid) { _ = try PostRules.title("two\nlines") }
    expectError(.invalid) { _ = try PostRules.title("esc \u{1B}[2J") }
    expectError(.invalid) { _ = try PostRules.title("nul \u{0}") }
    expectError(.invalid) { _ = try PostRules.title("c1 \u{9B}") }
    expectError(.invalid) { _ = try PostRules.title("del \u{7F}") }
  }

  @Test func bodies() throws {
    #expect(try PostRules.description("") == "")
    #expect(try PostRules.description("a\r\nb\n") == "a\nb")
    #expect(try PostRules.comment("  keep\n  indent  ") == "keep\n  indent")
    #expect(try PostRules.comment(String(repeating: "c", count: 10_000)).count == 10_000)
    expectError(.invalid) { _ = try PostRules.comment(String(repeating: "c", count: 10_001)) }
    expectError(.invalid) { _ = try PostRules.description(String(repeating: "d", count: 10_001)) }
    expectError(.empty) { _ = try PostRules.comment("\n \n") }
    expectError(.invalid) { _ = try PostRules.comment("bell \u{07}") }
    expectError(.invalid) { _ = try PostRules.description("osc \u{1B}]0;x\u{07}") }
    // Limits count characters (a family emoji is one) and bytes (it is 25 of them).
    let family = "👨‍👩‍👧‍👦"
    #expect(try PostRules.comment(String(repeating: family, count: 1_600)).count == 1_600)
    expectError(.invalid) { _ = try PostRules.comment(String(repeating: family, count: 1_601)) }
  }

  /// Control characters are found by their UTF-8 bytes (issue 20): exactly the scalars of
  /// general category Cc, wherever they stand, and nothing else (every scalar up to U+FFFF and
  /// the planes' first ones).
  @Test func controlCharactersAreExactlyCategoryCc() throws {
    let scalars =
      (0...0xFFFF).compactMap(Unicode.Scalar.init) + [
        Unicode.Scalar(0x1F600)!, Unicode.Scalar(0xE0001)!, Unicode.Scalar(0x10FFFF)!,
      ]
    for scalar in scalars where scalar != "\r" {
      let control = scalar.properties.generalCategory == .control
      // At either end white space is trimmed before the check.
      let ends = scalar.properties.isWhitespace ? [] : ["\(scalar)x", "é\(scalar)"]
      for text in ["a\(scalar)b", "日\(scalar)本"] + ends {
        let refused: Bool
        do {
          _ = try PostRules.comment(text)
          refused = false
        } catch { refused = true }
        if control && scalar != "\t" && scalar != "\n" {
          #expect(refused, "U+\(String(scalar.value, radix: 16)) in \(text.debugDescription)")
        } else if !control {
          #expect(!refused, "U+\(String(scalar.value, radix: 16)) in \(text.debugDescription)")
        }
      }
    }
    expectError(.invalid) { _ = try PostRules.title("lone \r here") }
    expectError(.invalid) { _ = try PostRules.title("line\r\nbreak") }
  }

  @Test(arguments: EngineFixtures.withRemote)
  func aBadPostStoresNothing(_ engine: any EngineFixture) throws {
    let world = try BoardWorld(engine)
    let alice = try world.board("alice")
    expectError(.invalid) {
      _ = try alice.createThread(
        title: String(repeating: "t", count: 201), description: "", image: tinyImage)
    }
    expectError(.empty) { _ = try alice.createThread(title: "   ", description: "", image: nil) }
    #expect(try alice.threads(page: 1).items.isEmpty)
    try alice.createThread(title: "ok", description: "", image: nil)
    expectError(.empty) { _ = try alice.addComment(to: 1, text: "  ") }
    expectError(.notFound) { _ = try alice.addComment(to: 2, text: "x") }
    #expect(try alice.thread(1).commentCount == 0)
    // The failed attempts used no numbers.
    #expect(try alice.createThread(title: "next", description: "", image: nil).number == 2)
  }
}
