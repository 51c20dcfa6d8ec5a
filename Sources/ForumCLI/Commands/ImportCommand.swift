import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// `import ncmb DIR`: the board's owner brings an NCMB console export onto the board: every
/// `<Class>.json` with its objectIds, dates and ACLs, `user.json` (anonymous ids kept, hashed),
/// `role.json` (memberships), `files.json` with its `files/` folder; the app's own board (the
/// seed app's `Thread` and `Comment`, `BoardImport`) becomes the board's threads and comments.
/// Everything is read and checked first, one object at a time (a bad input is one line each and
/// nothing is written); then the files are read again and each class is one transaction (users,
/// roles, each file likewise; threads with their comments), so a run that is killed leaves
/// whole classes and a second run finishes it. Objects already there exactly so are
/// "unchanged". Memory holds one object of the export at a time, plus a few bytes an object
/// for its id and, for threads and comments, their numbering.
enum ImportCommand: BoardlessCommand {
  static let name = "import"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "the board's owner imports an NCMB console export (import ncmb DIR)",
      "所有者が NCMB コンソールのエクスポートを取り込む (import ncmb DIR)"),
    details: Localized(
      "Every <Class>.json keeps its objectIds, dates, ACLs, pointers and relations; user.json's "
        + "anonymous users sign in again with their ids; role.json's roles and files.json with "
        + "DIR/files/ come too. The app's Thread and Comment, when they are the board's shape "
        + "(title, description, fileName; text and a pointer to the thread), become the board's "
        + "threads and comments; others must be renamed: "
        + "--rename Thread=AppThread,Comment=AppComment. A second run changes nothing.",
      "各 <Class>.json を objectId・日時・ACL・ポインタ・リレーションのまま取り込みます。"
        + "user.json の匿名ユーザーは同じ ID で再びサインインでき、role.json のロールと "
        + "files.json (DIR/files/) も取り込みます。Thread と Comment が掲示板の形 (title, "
        + "description, fileName / text とスレッドへのポインタ) なら掲示板のスレッドとコメントに"
        + "なります。そうでなければ --rename Thread=AppThread,Comment=AppComment で名前を変えて"
        + "ください。"
        + "2 回目の実行は何も変えません。"),
    parameters: [db, rename, source, directory])

  enum Source: String, CaseIterable, ArgumentValue {
    case ncmb
    static var valueName: String { "ncmb" }
    static var completion: Completion { .words(allCases.map(\.rawValue)) }
    init(parsing word: String, messages: Messages) throws {
      guard let source = Source(rawValue: word) else { throw CLIError.usage(ImportCommand.usage) }
      self = source
    }
  }

  static let usage = "usage: forum import ncmb DIR [--rename CLASS=NEW,…]"
  static let db = databaseOption
  static let rename = Option<String>(
    "rename", value: "CLASS=NEW,…",
    help: Localized(
      "import these classes under new names (the board's own need it)",
      "クラスを別名で取り込む (掲示板自身のクラスに必要)"))
  static let source = Argument<Source>()
  static let directory = Argument<FilePath>("DIR")

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    guard invocation[source] != nil, let dir = invocation[directory]?.path else {
      throw CLIError.usage(usage)
    }
    var renames: [String: String] = [:]
    for pair in (invocation[rename] ?? "").split(separator: ",") {
      let parts = pair.split(separator: "=", omittingEmptySubsequences: false).map(String.init)
      guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
        throw CLIError.usage(usage)
      }
      renames[parts[0]] = parts[1]
    }
    let location = try boardsHostLocation(invocation[db], options: options)
    if EngineKind(location: location) == .sqlite,
      try Datastore.open(location).rules != Board.rules
    {
      try Board.initialize(location: location)
    }
    let store = try Datastore.open(location)
    var reader = NCMBExportReader(
      directory: ImageFile.expandTilde(dir), renames: renames, messages: messages, store: store)
    // Everything is read and checked (the datastore's own checks too) before any write.
    let plan = try reader.check()
    guard reader.problems.isEmpty else {
      for problem in reader.problems { ForumMain.writeError(SafeText.sanitize(problem)) }
      if reader.problemCount > reader.problems.count {
        ForumMain.writeError("…")
      }
      throw CLIError.failed(messages.importNothingWritten(reader.problemCount))
    }
    let pause = ProcessInfo.processInfo.environment["FORUM_IMPORT_TEST_PAUSE"].flatMap(Double.init)
    var first = true
    var tally = ImportTally()
    for (index, batch) in plan.batches.enumerated() {
      try reader.write(batch, tally: &tally)
      // One line a class: the files' batches (one each) are added up.
      if index + 1 < plan.batches.count, plan.batches[index + 1].isFile, batch.isFile { continue }
      for name in tally.order {
        let counts = tally.counts[name] ?? [:]
        print(
          messages.importLine(
            SafeText.sanitize(name), imported: counts[.imported] ?? 0,
            unchanged: counts[.unchanged] ?? 0, refused: counts[.conflict] ?? 0,
            conflicts: (tally.conflicts[name] ?? []).map { SafeText.sanitize($0) },
            hangingOnRefused: (tally.hangingOnRefused[name] ?? []).map { SafeText.sanitize($0) }))
      }
      tally = ImportTally()
      // A test's hook: time to kill the import between two classes' transactions.
      if first, let pause {
        fflush(stdout)
        first = false
        usleep(useconds_t(pause * 1_000_000))
      }
    }
    for note in plan.notes { print(SafeText.sanitize(note)) }
    for user in plan.needPassword {
      print(messages.importNeedsPassword(SafeText.sanitize(user.name), objectId: user.objectId))
    }
    return 0
  }
}

extension ImportOutcome: Hashable {}

/// Outcomes by class, in the order the classes came.
struct ImportTally {
  var order: [String] = []
  var counts: [String: [ImportOutcome: Int]] = [:]
  /// The first few ids refused (the line shows five): taken on the board by other values, and
  /// hanging on something refused (`Pulled.refused`).
  var conflicts: [String: [String]] = [:]
  var hangingOnRefused: [String: [String]] = [:]

  mutating func add(
    _ outcome: ImportOutcome, className: String, label: String, hangsOnRefused: Bool = false
  ) {
    if counts[className] == nil { order.append(className) }
    counts[className, default: [:]][outcome, default: 0] += 1
    guard outcome == .conflict else { return }
    if hangsOnRefused {
      if hangingOnRefused[className, default: []].count < 6 {
        hangingOnRefused[className, default: []].append(label)
      }
    } else if conflicts[className, default: []].count < 6 {
      conflicts[className, default: []].append(label)
    }
  }
}

/// One transaction's worth of an export, read again from its file when it is written.
enum ImportBatch {
  case users
  case roles([(item: ImportItem, label: String?)])
  case file(NCMBFileEntry)
  case appClass(file: String, className: String)
  /// The app's board: its threads and their comments, in one transaction.
  case board(BoardNumbering)

  var isFile: Bool {
    if case .file = self { return true }
    return false
  }
}

struct ImportPlan {
  var batches: [ImportBatch] = []
  var notes: [String] = []
  var needPassword: [(name: String, objectId: String)] = []
}

extension ImportItem {
  var objectId: String {
    if case .object(let object, _) = self { return object.objectId }
    return ""
  }
}
