import Datastore
import Foundation

/// `forum-bench hammer --db PATH --count N --tag T`: one of several processes writing the same
/// database at once. It signs in as its own user, then creates `N` objects of class `Hammer`, each
/// in its own transaction together with the next number of the `hammer` sequence. Run two or more
/// at once: every object must land, every number must be handed out exactly once, and no process
/// may ever see "database is locked".
enum ConcurrentWriter {
  static let className = "Hammer"
  static let sequence = "hammer"
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

  /// Creates the objects; throws the first failure.
  static func run(_ options: Options) throws -> Report {
    let start = Date()
    let store = try Datastore(path: options.database)
    let login = try store.loginAnonymously(uuid: UUID().uuidString)
    let client = try store.client(sessionToken: login.sessionToken)
    var first: Int64 = 0
    var last: Int64 = 0
    for index in 0..<options.count {
      let number = try client.transaction {
        let number = try client.nextNumber(of: sequence)
        try client.create(
          className,
          fields: [
            "tag": .string(options.tag), "index": .int(Int64(index)), "number": .int(number),
          ],
          acl: .publicRead(owner: login.user.objectId))
        return number
      }
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
        "hammer \(options.tag): \(report.created) objects, numbers \(report.firstNumber)..."
          + "\(report.lastNumber), \(String(format: "%.2f", report.seconds)) s, "
          + "\(Int(rate)) transactions/s")
      return 0
    } catch {
      FileHandle.standardError.write(Data("hammer \(options.tag): \(error)\n".utf8))
      return 1
    }
  }
}
