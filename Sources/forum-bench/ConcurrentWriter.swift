@_spi(Tools) import Datastore
import Forum
import Foundation

/// `forum-bench hammer --db PATH --count N --tag T`: one of several processes writing the same
/// board at once. It signs in as its own user, makes thread #1 unless it exists (the processes
/// race for that too), then posts `N` comments on it through the Datastore API, each in its own
/// transaction, carrying its tag and index. Run two or more at once: every comment must land, every
/// comment number must be handed out exactly once, the thread's counters must add up, and no
/// process may ever see "database is locked".
enum ConcurrentWriter {
  static let usage = "usage: forum-bench hammer --db PATH --count N --tag T"

  struct Options: Equatable {
    var database: String
    var count: Int
    var tag: String
  }

  /// What a run did, for the summary line.
  struct Report {
    var created: Int
    var firstNumber: Int64
    var lastNumber: Int64
    var seconds: Double
  }

  /// Parses the arguments after `hammer`; nil when they are not a valid command line.
  static func parse(_ arguments: [String]) -> Options? {
    var database: String?
    var count: Int?
    var tag: String?
    var rest = arguments[...]
    while let option = rest.popFirst() {
      guard let value = rest.popFirst() else { return nil }
      switch option {
      case "--db": database = value
      case "--count": count = Int(value)
      case "--tag": tag = value
      default: return nil
      }
    }
    guard let database, !database.isEmpty, let count, count > 0, let tag, !tag.isEmpty else {
      return nil
    }
    return Options(database: database, count: count, tag: tag)
  }

  /// Posts the comments; throws the first failure.
  static func run(_ options: Options) throws -> Report {
    let start = Date()
    let store = try Datastore.open(options.database, rules: Board.rules, indexes: Board.indexes)
    let login = try store.loginAnonymously(secret: Datastore.newSecret())
    let client = store.client(login)
    let me = login.user.objectId
    let thread = try client.transaction { () -> DataObject in
      let first = Query(className: "Thread", equalTo: ["number": .int(1)], limit: 1)
      if let thread = try client.find(first).first { return thread }
      return try client.create(
        "Thread", fields: ["title": .string("hammered")], acl: .publicRead(owner: me))
    }
    let pointer = JSONValue.pointer(className: "Thread", objectId: thread.objectId)
    var first: Int64 = 0
    var last: Int64 = 0
    for index in 0..<options.count {
      let comment = try client.transaction {
        try client.create(
          "Comment",
          fields: [
            "text": .string("\(options.tag) \(index)"), "thread": pointer,
            "tag": .string(options.tag), "index": .int(Int64(index)),
          ], acl: .publicRead(owner: me))
      }
      let number = comment["number"]?.intValue ?? 0
      if index == 0 { first = number }
      last = number
    }
    return Report(
      created: options.count, firstNumber: first, lastNumber: last,
      seconds: Date().timeIntervalSince(start))
  }

  /// The subcommand: exit status 0 when every object was written, 1 on a failure, 2 on usage.
  static func main(_ arguments: [String]) -> Int32 {
    guard let options = parse(arguments) else {
      FileHandle.standardError.write(Data((usage + "\n").utf8))
      return 2
    }
    do {
      let report = try run(options)
      let rate = Double(report.created) / max(report.seconds, 0.000_001)
      print(
        "hammer \(options.tag): \(report.created) comments, numbers \(report.firstNumber)..."
          + "\(report.lastNumber), \(String(format: "%.2f", report.seconds)) s, "
          + "\(Int(rate)) transactions/s")
      return 0
    } catch {
      FileHandle.standardError.write(Data("hammer \(options.tag): \(error)\n".utf8))
      return 1
    }
  }
}
