import Datastore
import Forum
import Foundation

/// `forum-bench seed`: fills a new board with threads, comments, users and images through the
/// Datastore API, many posts per transaction. Objects carry exactly the fields and ACLs that
/// `Board.createThread` and `Board.addComment` write (Forum has no bulk import), and the engine's
/// rules number and count them as it does the board's. Thread #1 gets the big comment count,
/// thread #2 ten comments.
enum SeedCommand {
  struct Settings {
    var database: String
    var threads: Int
    var comments: Int
    var users: Int
    /// Comments of thread #1; thread #2 gets `smallThread`.
    var bigThread: Int
    var smallThread = 10
    /// Every `imageEvery`-th thread has an image (0: none).
    var imageEvery: Int
    /// Posts per transaction (whole threads, so a thread and its comments land together).
    var batch: Int
    /// Page cache of the seeding connection.
    var cacheMegabytes: Int
    /// Direct messages between other people (`--dms`), spread over conversations.
    var directMessages = 0
  }

  // Board's class names; Forum keeps them internal.
  static let threadClass = "Thread"
  static let commentClass = "Comment"

  static let displayNames = ["さくら", "Ken", "ゆうき", "Alex", "はると", "Mia", "そうた", "Jo"]

  static let imageFixtures = [
    "Fixtures/corpus/png/suite/basn2c08.png", "Fixtures/corpus/jpeg/testorig.jpg",
  ]

  static func main(_ arguments: [String]) -> Int32 {
    do {
      let settings = try parse(arguments)
      print(try seed(settings))
      return 0
    } catch {
      return reportFailure("seed", error)
    }
  }

  static func parse(_ arguments: [String]) throws -> Settings {
    let options = try Options(
      arguments,
      known: [
        "db", "threads", "comments", "users", "big-thread", "image-every", "batch", "cache-mb",
        "dms",
      ])
    guard let database = options.string("db"), !database.isEmpty else {
      throw UsageError("--db is required")
    }
    guard let threads = try options.int("threads"), threads >= 3 else {
      throw UsageError(
        "--threads is required and at least 3 (run reads #1 and #2 and comments on #3)")
    }
    let comments = try options.int("comments", fallback: 0)!
    return Settings(
      database: database, threads: threads, comments: comments,
      users: max(1, try options.int("users", fallback: 8)!),
      bigThread: try options.int("big-thread", fallback: min(10_000, comments / 2))!,
      imageEvery: try options.int("image-every", fallback: 50)!,
      batch: max(1, try options.int("batch", fallback: 100_000)!),
      cacheMegabytes: max(2, try options.int("cache-mb", fallback: 1024)!),
      directMessages: try options.int("dms", fallback: 0)!)
  }

  /// How many comments each thread gets: the big and the small thread first, the rest spread at
  /// random over the other threads so counts vary as on a real board.
  static func commentCounts(_ settings: Settings, random: inout SeededGenerator) -> [Int] {
    var counts = Array(repeating: 0, count: settings.threads)
    var left = settings.comments
    counts[0] = min(settings.bigThread, left)
    left -= counts[0]
    counts[1] = min(settings.smallThread, left)
    left -= counts[1]
    for _ in 0..<left { counts[Int.random(in: 2..<settings.threads, using: &random)] += 1 }
    return counts
  }

  static func seed(_ settings: Settings) throws -> String {
    guard !FileManager.default.fileExists(atPath: settings.database) else {
      throw BenchError("\(settings.database) exists; seed fills a new board")
    }
    let start = Date()
    let profileDirectory = try makeTemporaryDirectory("forum-seed")
    defer { try? FileManager.default.removeItem(atPath: profileDirectory) }

    // Seed-only tuning, not stored in the file: a page cache big enough for the indexes, so
    // inserting random objectIds does not write each index page out again every transaction.
    SQLCapture.setUpSQL = "PRAGMA cache_size = -\(settings.cacheMegabytes * 1024)"
    SQLCapture.install()
    let store = try Datastore.open(settings.database, rules: Board.rules, indexes: Board.indexes)
    let profiles = ProfileStore(directory: profileDirectory + "/profiles")
    var authors: [(client: DatastoreClient, id: String)] = []
    for index in 0..<settings.users {
      let (client, user) = try store.signIn(profile: "user\(index + 1)", in: profiles)
      if index % 3 != 2 { try client.setDisplayName(displayNames[index % displayNames.count]) }
      authors.append((client, user.objectId))
    }
    let images = try imageFixtures.map { path in
      try ImagePreparer.prepare(Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/" + path)))
    }

    var random = SeededGenerator(seed: 42)
    let text = TextPool(seed: 7)
    let counts = commentCounts(settings, random: &random)
    var next = 0
    var imageCount = 0
    var reported = 0
    while next < settings.threads {
      try authors[0].client.transaction {
        var posts = 0
        while next < settings.threads && posts < settings.batch {
          let image =
            settings.imageEvery > 0 && (next + 1) % settings.imageEvery == 0
            ? images[imageCount % images.count] : nil
          try insertThread(
            commentCount: counts[next], image: image, authors: authors, random: &random,
            text: text)
          imageCount += image == nil ? 0 : 1
          posts += 1 + counts[next]
          next += 1
        }
      }
      if next * 10 / settings.threads > reported {
        reported = next * 10 / settings.threads
        let elapsed = String(format: "%.1f", Date().timeIntervalSince(start))
        FileHandle.standardError.write(
          Data("seed: \(next) of \(settings.threads) threads, \(elapsed) s\n".utf8))
      }
    }
    let conversations = try DirectMessageSeed.seed(
      settings.directMessages, store: store, profiles: profiles, batch: settings.batch,
      random: &random, text: text)
    let seconds = Date().timeIntervalSince(start)
    let posts = settings.threads + settings.comments + settings.directMessages
    return "seeded \(settings.database): \(settings.threads) threads + \(settings.comments) "
      + "comments + \(settings.directMessages) direct messages in \(conversations) "
      + "conversations = \(posts) posts, \(settings.users) users, \(imageCount) images; "
      + "thread #1 has \(counts[0]) comments, #2 has \(counts[1]); "
      + String(format: "%.1f s, %.0f posts/s", seconds, Double(posts) / seconds)
  }

  /// One thread and its comments, laid out field for field as `Board.createThread` and
  /// `Board.addComment` write them, by authors picked at random.
  private static func insertThread(
    commentCount: Int, image: PreparedImage?, authors: [(client: DatastoreClient, id: String)],
    random: inout SeededGenerator, text: TextPool
  ) throws {
    let author = authors.randomElement(using: &random)!
    let acl = ACL.publicRead(owner: author.id)
    var fields: [String: JSONValue] = [
      "title": .string(text.title(&random)),
      "description": .string(text.description(&random)),
    ]
    if let image {
      let fileName = "thread-\(UUID().uuidString.lowercased()).\(image.format.fileExtension)"
      try author.client.putFile(
        name: fileName, bytes: [UInt8](image.data), mimeType: image.format.mimeType, acl: acl)
      fields["fileName"] = .string(fileName)
      // ImageSummary.json's shape.
      fields["image"] = .object([
        "mimeType": .string(image.format.mimeType), "width": .int(Int64(image.width)),
        "height": .int(Int64(image.height)), "fileSize": .int(Int64(image.data.count)),
        "removedMetadata": .array(image.removedMetadata.map { .string($0) }),
      ])
    }
    let thread = try author.client.create(threadClass, fields: fields, acl: acl)
    let pointer = JSONValue.pointer(className: threadClass, objectId: thread.objectId)
    for _ in 0..<commentCount {
      let writer = authors.randomElement(using: &random)!
      try writer.client.create(
        commentClass, fields: ["text": .string(text.comment(&random)), "thread": pointer],
        acl: .publicRead(owner: writer.id))
    }
  }
}
