@_spi(Tools) import Datastore
import Forum
import Foundation

/// `forum-bench seed`: fills a new board with threads, comments, users and images. Users sign in
/// through the Datastore API; threads and comments are written in bulk (`BulkSeed`), or with
/// `--one-by-one yes` posted each through the Datastore API, many posts per transaction. Either
/// way objects carry exactly the fields and ACLs that `Board.createThread` and
/// `Board.addComment` write (Forum has no bulk import), numbered and counted as the engine's
/// rules do (`BulkSeedTests` proves the two boards the same). Thread #1 gets the big comment
/// count, thread #2 ten comments.
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
    /// Seeds without the full-text index (issue #12: what the index costs; the board gets it,
    /// as an older board does, when `forum` first opens it).
    var withoutSearch = false
    /// Writes the rows in bulk (`BulkSeed`) instead of posting each through the Datastore API
    /// (`--one-by-one yes`); the two give the same board.
    var bulk = true
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
        "dms", "without-search", "one-by-one",
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
      directMessages: try options.int("dms", fallback: 0)!,
      withoutSearch: options.string("without-search") == "yes",
      bulk: options.string("one-by-one") != "yes")
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
    let indexes = Board.indexes.filter { !settings.withoutSearch || $0.kind != .text }
    var store: Datastore? = try Datastore.open(
      settings.database, rules: Board.rules, indexes: indexes)
    let profiles = ProfileStore(directory: profileDirectory + "/profiles")
    var authors: [(client: DatastoreClient, id: String)] = []
    for index in 0..<settings.users {
      let (client, user) = try store!.signIn(profile: "user\(index + 1)", in: profiles)
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
    var bulk: BulkSeed?
    let authorIds = authors.map(\.id)
    if settings.bulk {
      // The bulk load needs the file to itself: the API's connection closes first.
      authors = []
      store = nil
      bulk = try BulkSeed(
        path: settings.database, posts: settings.threads + settings.comments,
        cacheMegabytes: settings.cacheMegabytes)
    }
    while next < settings.threads {
      func batch() throws {
        var posts = 0
        while next < settings.threads && posts < settings.batch {
          let image =
            settings.imageEvery > 0 && (next + 1) % settings.imageEvery == 0
            ? images[imageCount % images.count] : nil
          let thread = makeThread(
            commentCount: counts[next], image: image, authors: authorIds.count, random: &random,
            text: text)
          if let bulk {
            try bulk.write(thread, authors: authorIds)
          } else {
            try post(thread, authors: authors)
          }
          imageCount += image == nil ? 0 : 1
          posts += 1 + counts[next]
          next += 1
        }
      }
      if let bulk {
        try batch()
        try bulk.commitBatch()
      } else {
        try authors[0].client.transaction { try batch() }
      }
      if next * 10 / settings.threads > reported {
        reported = next * 10 / settings.threads
        let elapsed = String(format: "%.1f", Date().timeIntervalSince(start))
        FileHandle.standardError.write(
          Data("seed: \(next) of \(settings.threads) threads, \(elapsed) s\n".utf8))
      }
    }
    if let load = bulk {
      try load.finish()
      bulk = nil
      // Opened again as `forum` opens it: the rules and indexes found as installed.
      store = try Datastore.open(settings.database, rules: Board.rules, indexes: indexes)
    }
    let conversations = try DirectMessageSeed.seed(
      settings.directMessages, store: store!, profiles: profiles, batch: settings.batch,
      random: &random, text: text)
    let seconds = Date().timeIntervalSince(start)
    let posts = settings.threads + settings.comments + settings.directMessages
    return "seeded \(settings.database): \(settings.threads) threads + \(settings.comments) "
      + "comments + \(settings.directMessages) direct messages in \(conversations) "
      + "conversations = \(posts) posts, \(settings.users) users, \(imageCount) images; "
      + "thread #1 has \(counts[0]) comments, #2 has \(counts[1]); "
      + String(format: "%.1f s, %.0f posts/s", seconds, Double(posts) / seconds)
  }

  /// One thread and its comments, by authors picked at random, with texts from the pool.
  static func makeThread(
    commentCount: Int, image: PreparedImage?, authors: Int, random: inout SeededGenerator,
    text: TextPool
  ) -> SeedThread {
    // `Int.random(in: 0..<count)` is what `randomElement` draws: boards seeded before stay the same.
    let author = Int.random(in: 0..<authors, using: &random)
    var thread = SeedThread(
      author: author, title: text.title(&random), description: text.description(&random),
      image: nil, comments: [])
    if let image {
      let fileName = "thread-\(UUID().uuidString.lowercased()).\(image.format.fileExtension)"
      // ImageSummary.json's shape.
      let summary = JSONValue.object([
        "mimeType": .string(image.format.mimeType), "width": .int(Int64(image.width)),
        "height": .int(Int64(image.height)), "fileSize": .int(Int64(image.data.count)),
        "removedMetadata": .array(image.removedMetadata.map { .string($0) }),
      ])
      thread.image = (fileName, [UInt8](image.data), image.format.mimeType, summary)
    }
    for _ in 0..<commentCount {
      let writer = Int.random(in: 0..<authors, using: &random)
      thread.comments.append((writer, text.comment(&random)))
    }
    return thread
  }

  /// Posts a thread and its comments through the Datastore API, field for field as
  /// `Board.createThread` and `Board.addComment` write them.
  private static func post(_ thread: SeedThread, authors: [(client: DatastoreClient, id: String)])
    throws
  {
    let author = authors[thread.author]
    let acl = ACL.publicRead(owner: author.id)
    var fields: [String: JSONValue] = [
      "title": .string(thread.title), "description": .string(thread.description),
    ]
    if let image = thread.image {
      try author.client.putFile(
        name: image.name, bytes: image.bytes, mimeType: image.mimeType, acl: acl)
      fields["fileName"] = .string(image.name)
      fields["image"] = image.summary
    }
    let object = try author.client.create(threadClass, fields: fields, acl: acl)
    let pointer = JSONValue.pointer(className: threadClass, objectId: object.objectId)
    for comment in thread.comments {
      let writer = authors[comment.author]
      try writer.client.create(
        commentClass, fields: ["text": .string(comment.text), "thread": pointer],
        acl: .publicRead(owner: writer.id))
    }
  }
}
