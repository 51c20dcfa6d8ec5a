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
    let location = location(invocation[db], options: options)
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
            conflicts: (tally.conflicts[name] ?? []).map { SafeText.sanitize($0) }))
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
  /// The first few ids refused (the line shows five).
  var conflicts: [String: [String]] = [:]

  mutating func add(_ outcome: ImportOutcome, className: String, label: String) {
    if counts[className] == nil { order.append(className) }
    counts[className, default: [:]][outcome, default: 0] += 1
    if outcome == .conflict, conflicts[className, default: []].count < 6 {
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

/// An entry of `files.json`, as checked.
struct NCMBFileEntry {
  let name: String
  let mimeType: String
  let acl: ACL
  let createDate: Int64
  let updateDate: Int64
}

/// An NCMB objectId (16 letters and digits) in 16 bytes: the ids seen of a class, or of all
/// comments, held at this cost rather than as strings.
struct PackedId: Hashable, Comparable {
  let high: UInt64
  let low: UInt64

  init?(_ id: String) {
    let bytes = Array(id.utf8)
    guard bytes.count == 16 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    for byte in bytes[0..<8] { high = high << 8 | UInt64(byte) }
    for byte in bytes[8..<16] { low = low << 8 | UInt64(byte) }
    self.high = high
    self.low = low
  }

  static func < (a: PackedId, b: PackedId) -> Bool {
    (a.high, a.low) < (b.high, b.low)
  }
}

/// The objectIds seen in one file: packed when they are NCMB's (any other is refused anyway).
struct SeenIds {
  private var packed = Set<PackedId>()
  private var other = Set<String>()

  mutating func insert(_ id: String) -> Bool {
    if let key = PackedId(id) { return packed.insert(key).inserted }
    return other.insert(id).inserted
  }
}

/// What the board gives the app's threads and comments (`BoardImport`): numbers in date order
/// (threads after the board's last, comments from 1 in each thread), counts and last activity;
/// what an earlier run gave is given again.
struct BoardNumbering {
  struct Thread {
    var number: Int64 = 0
    var createDate: Int64
    var comments: Int64 = 0
    var lastActivity: Int64
    var readers: Set<String>
    /// The counts and last activity of a thread already there (an earlier run): given again.
    var stored: [String: JSONValue]?
  }
  var threads: [String: Thread] = [:]
  /// Every comment's id, thread and date, then (sorted by id) its number.
  var comments: [(id: PackedId, thread: Int32, date: Int64, number: Int64)] = []
  var threadIds: [String] = []
  var threadIndex: [String: Int32] = [:]
  var hasComments = false
  var highest: Int64 = 0

  func number(ofComment id: String) -> Int64? {
    guard let key = PackedId(id) else { return nil }
    var low = 0
    var high = comments.count
    while low < high {
      let middle = (low + high) / 2
      if comments[middle].id < key { low = middle + 1 } else { high = middle }
    }
    return low < comments.count && comments[low].id == key ? comments[low].number : nil
  }
}

/// Reads an NCMB export directory: first every part of it is checked, one object at a time
/// (`check`), then each batch is read again and written (`write`).
struct NCMBExportReader {
  let directory: String
  let renames: [String: String]
  let messages: Messages
  let store: Datastore
  /// The first problems found (the rest are only counted).
  private(set) var problems: [String] = []
  private(set) var problemCount = 0
  /// The facts of each picture in `files.json`, for the threads that show one.
  private var pictures: [String: JSONValue] = [:]
  /// True while writing: a problem then means the export changed since it was checked.
  private var writing = false

  static let shownProblems = 100
  static let reservedClasses: Set<String> = Board.boardClasses.union([
    "user", "role", "file", "installation", "push",
  ])
  static let skipped: Set<String> = ["installation.json", "push.json"]

  init(directory: String, renames: [String: String], messages: Messages, store: Datastore) {
    self.directory = directory
    self.renames = renames
    self.messages = messages
    self.store = store
  }

  private mutating func problem(_ text: String) {
    problemCount += 1
    if problems.count < NCMBExportReader.shownProblems { problems.append(text) }
  }

  mutating func check() throws -> ImportPlan {
    var plan = ImportPlan()
    var info = stat()
    guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
      problem(messages.importNoDirectory(directory))
      return plan
    }
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
      .filter { $0.hasSuffix(".json") }.sorted()
    for (from, to) in renames.sorted(by: { $0.key < $1.key }) {
      if !names.contains(from + ".json") { problem(messages.importRenameUnknown(from)) }
      if NCMBExportReader.reservedClasses.contains(to) || names.contains(to + ".json") {
        problem(messages.importRenameTaken(from, to))
      }
    }
    if names.contains("user.json") {
      var seen = SeenIds()
      let whole = forEach("user.json") { reader, fields, index in
        guard let item = reader.userItem(fields, index: index, seen: &seen) else { return }
        _ = reader.checked(item, "user \(item.objectId)")
      }
      if whole { plan.batches.append(.users) }
      plan.needPassword = needPassword
    }
    if names.contains("role.json") { readRoles(&plan) }
    if names.contains("files.json") { readFiles(&plan) }
    // The app's own board, when its Thread (and Comment) are the board's shape.
    let board = ["Thread", "Comment"].filter {
      names.contains($0 + ".json") && renames[$0] == nil
    }
    if !board.isEmpty, let numbering = try checkBoard(has: Set(board)) {
      plan.batches.append(.board(numbering))
    }
    for name in names {
      if ["user.json", "role.json", "files.json"].contains(name) { continue }
      if NCMBExportReader.skipped.contains(name) {
        plan.notes.append(messages.importSkipped(name))
        continue
      }
      let exported = String(name.dropLast(5))
      if board.contains(exported) { continue }
      checkClass(exported, &plan)
    }
    return plan
  }

  /// Each object of `file` in order (`body(object, index)`), read one at a time; a problem
  /// with the file's structure is said once. False after such a problem.
  @discardableResult
  private mutating func forEach(
    _ file: String, _ body: (inout NCMBExportReader, [String: JSONValue], Int) throws -> Void
  ) rethrows -> Bool {
    guard let stream = NCMBExportStream(path: directory + "/" + file) else {
      problem(messages.importMissing(file))
      return false
    }
    var reading = stream
    defer { reading.close() }
    while true {
      let index = reading.index
      let object: [String: JSONValue]?
      do {
        object = try reading.next()
      } catch {
        switch error {
        case .badJSON: problem(messages.importBadJSON(file))
        case .noResults: problem(messages.importNoResults(file))
        case .notAnObject(let index): problem(messages.importNotAnObject(file, index: index))
        case .tooLarge(let index):
          problem(
            messages.importTooLarge(
              "\(file) #\(index + 1)", bytes: NCMBExportStream.maximumObjectBytes + 1,
              limit: NCMBExportStream.maximumObjectBytes))
        }
        return false
      }
      guard let object else { return true }
      try body(&self, object, index)
    }
  }

  /// The bytes of `path`, or nil with a problem said: missing, not a regular file, over `limit`.
  private mutating func readBounded(_ path: String, limit: Int, shown: String) -> [UInt8]? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      problem(messages.importMissing(shown))
      return nil
    }
    guard Int(info.st_size) <= limit else {
      problem(messages.importTooLarge(shown, bytes: Int(info.st_size), limit: limit))
      return nil
    }
    guard let data = FileManager.default.contents(atPath: path), data.count <= limit else {
      problem(messages.importMissing(shown))
      return nil
    }
    return [UInt8](data)
  }

  /// An object's system fields and the rest; nil after a problem (said with its place). The
  /// datastore's own checks (`Datastore.check`) run on it too.
  private mutating func object(
    _ fields: [String: JSONValue], className: String, file: String, index: Int,
    seen: inout SeenIds
  ) -> ImportedObject? {
    let place = "\(file) #\(index + 1)"
    guard let objectId = fields["objectId"]?.stringValue else {
      problem(messages.importMissingField(place, "objectId"))
      return nil
    }
    let at = "\(file) \(objectId)"
    guard seen.insert(objectId) else {
      problem(messages.importDuplicate(file, objectId))
      return nil
    }
    var dates: [Int64] = []
    for field in ["createDate", "updateDate"] {
      guard let text = fields[field]?.stringValue ?? fields[field]?.objectValue?["iso"]?.stringValue
      else {
        problem(messages.importMissingField(at, field))
        return nil
      }
      guard let milliseconds = NCMBDate.milliseconds(text) else {
        problem(messages.importBadField(at, field, "not a date yyyy-MM-ddTHH:mm:ss.SSSZ"))
        return nil
      }
      dates.append(milliseconds)
    }
    var acl = ACL.publicReadWrite
    if let given = fields["acl"] {
      do {
        acl = try ACL(json: given)
      } catch {
        problem(messages.importBadField(at, "acl", describe(error)))
        return nil
      }
    }
    var rest = fields
    for field in ["objectId", "createDate", "updateDate", "acl"] { rest[field] = nil }
    return ImportedObject(
      className: className, objectId: objectId, createDate: dates[0], updateDate: dates[1],
      acl: acl, fields: rest.mapValues(renamed))
  }

  /// The datastore's checks on `item`; false after a problem (said under `place`).
  private mutating func checked(_ item: ImportItem, _ place: String) -> Bool {
    do {
      try store.check(item)
      return true
    } catch let error as DatastoreError {
      problem("\(place): \(messages.failure(error))")
    } catch {
      problem("\(place): \(describe(error))")
    }
    return false
  }

  /// Pointers and relations to a renamed class follow it.
  private func renamed(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let values): return .array(values.map(renamed))
    case .object(var fields):
      if let type = fields["__type"]?.stringValue, type == "Pointer" || type == "Relation",
        let target = fields["className"]?.stringValue, let name = renames[target]
      {
        fields["className"] = .string(name)
      }
      return .object(fields.mapValues(renamed))
    default: return value
    }
  }

  private func describe(_ error: Error) -> String {
    if let error = error as? DatastoreError { return error.detail ?? error.message }
    return String(describing: error)
  }

  // MARK: The app's classes

  private mutating func checkClass(_ exported: String, _ plan: inout ImportPlan) {
    let file = exported + ".json"
    let className = renames[exported] ?? exported
    guard renames[exported] != nil || !NCMBExportReader.reservedClasses.contains(exported) else {
      problem(messages.importBoardClass(exported))
      return
    }
    guard className.utf8.count <= 64, let first = className.utf8.first,
      (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first),
      className.utf8.allSatisfy({
        (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
          || $0 == 0x5F
      })
    else {
      problem(messages.importBadField(file, "className", "not a class name"))
      return
    }
    var seen = SeenIds()
    let whole = forEach(file) { reader, fields, index in
      guard
        let object = reader.object(
          fields, className: className, file: file, index: index, seen: &seen)
      else { return }
      _ = reader.checked(.object(object, anonymousId: nil), "\(className) \(object.objectId)")
    }
    if whole { plan.batches.append(.appClass(file: file, className: className)) }
  }

  // MARK: Users and roles

  private var needPassword: [(name: String, objectId: String)] = []

  private mutating func readRoles(_ plan: inout ImportPlan) {
    var items: [(item: ImportItem, label: String?)] = []
    var seen = SeenIds()
    var usersOf: [String: Set<String>] = [:]
    var childRoles: [String: [String]] = [:]
    var nameOf: [String: String] = [:]
    let whole = forEach("role.json") { reader, fields, index in
      guard
        let object = reader.object(
          fields, className: "role", file: "role.json", index: index, seen: &seen)
      else { return }
      let at = "role.json \(object.objectId)"
      guard let roleName = fields["roleName"]?.stringValue, !roleName.isEmpty,
        roleName.utf8.count <= 64,
        roleName.utf8.allSatisfy({
          (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            || $0 == 0x5F || $0 == 0x2D
        })
      else {
        reader.problem(reader.messages.importBadField(at, "roleName", "letters, digits, _ or -"))
        return
      }
      guard roleName != "moderator" else {
        reader.problem(reader.messages.importModeratorRole(at))
        return
      }
      nameOf[object.objectId] = roleName
      usersOf[roleName] = Set(NCMBExportReader.related(fields["belongUser"]))
      childRoles[roleName] = NCMBExportReader.related(fields["belongRole"])
      let item = ImportItem.object(object, anonymousId: nil)
      guard reader.checked(item, "role \(object.objectId)") else { return }
      items.append((item, object.objectId))
    }
    // A role's users include those of the roles that belong to it, at any depth.
    for role in usersOf.keys.sorted() {
      var members = Set<String>()
      var visited = Set<String>()
      var queue = [role]
      while let next = queue.popLast() {
        guard visited.insert(next).inserted else { continue }
        members.formUnion(usersOf[next] ?? [])
        queue += (childRoles[next] ?? []).compactMap { nameOf[$0] }
      }
      for userId in members.sorted() {
        let item = ImportItem.roleMember(role: role, userId: userId)
        if checked(item, "role \(role)") { items.append((item, nil)) }
      }
    }
    if whole { plan.batches.append(.roles(items)) }
  }

  /// The objectIds a relation's `objects` point at (none when the export kept only its class).
  static func related(_ value: JSONValue?) -> [String] {
    guard case .array(let objects)? = value?.objectValue?["objects"] else { return [] }
    return objects.compactMap { $0.pointerId }
  }

  // MARK: Files

  private mutating func readFiles(_ plan: inout ImportPlan) {
    let folder = directory + "/files"
    let root = realPath(folder)
    var seen = Set<String>()
    var entries: [NCMBFileEntry] = []
    forEach("files.json") { reader, fields, index in
      guard let name = fields["fileName"]?.stringValue else {
        reader.problem(
          reader.messages.importMissingField("files.json #\(index + 1)", "fileName"))
        return
      }
      let at = "files.json \(name)"
      let path = folder + "/" + name
      // A name naming a place outside DIR/files (`../x`, a link out of it) is refused.
      let outside =
        name.contains("/") || name == ".." || name == "."
        || (access(path, F_OK) == 0
          && !(reader.realPath(path) ?? "").hasPrefix((root ?? "\u{0}") + "/"))
      guard !outside else {
        reader.problem(reader.messages.importEscapes(at))
        return
      }
      guard seen.insert(name).inserted else {
        reader.problem(reader.messages.importDuplicate("files.json", name))
        return
      }
      guard
        let bytes = reader.readBounded(
          path, limit: reader.store.fileSizeLimit, shown: "files/" + name)
      else { return }
      if let size = fields["fileSize"]?.intValue, size != Int64(bytes.count) {
        reader.problem(
          reader.messages.importBadField(
            at, "fileSize", "says \(size), files/\(name) has \(bytes.count)"))
        return
      }
      var acl = ACL.publicReadWrite
      if let given = fields["acl"] {
        do {
          acl = try ACL(json: given)
        } catch {
          reader.problem(reader.messages.importBadField(at, "acl", reader.describe(error)))
          return
        }
      }
      let mimeType = fields["mimeType"]?.stringValue ?? "application/octet-stream"
      let entry: NCMBFileEntry
      do {
        let prepared = try Board.checkAppFile(bytes: bytes, mimeType: mimeType)
        let now = BackendDate.now()
        var dates: [Int64] = []
        for field in ["createDate", "updateDate"] {
          let text = fields[field]?.stringValue ?? fields[field]?.objectValue?["iso"]?.stringValue
          dates.append(text.flatMap(NCMBDate.milliseconds) ?? now)
        }
        entry = NCMBFileEntry(
          name: name, mimeType: prepared.mimeType, acl: acl, createDate: dates[0],
          updateDate: dates[1])
        reader.pictures[name] = try BoardImport.imageFacts(fileName: name, bytes: bytes)
        guard
          reader.checked(
            .file(
              ImportedFile(
                name: name, mimeType: prepared.mimeType, bytes: prepared.bytes, acl: acl,
                createDate: dates[0], updateDate: dates[1])), "files \(name)")
        else { return }
      } catch let rejection as ImageRejection {
        reader.problem(
          reader.messages.importBadField(
            at, "file", rejection.wording.text(japanese: reader.messages.japanese)))
        return
      } catch {
        reader.problem(reader.messages.importBadField(at, "file", reader.describe(error)))
        return
      }
      entries.append(entry)
    }
    // Each file is its own transaction (their lines are added up under "files").
    plan.batches += entries.map { .file($0) }
  }

  /// The file of `entry`, read and prepared again as it was checked.
  private func fileItem(_ entry: NCMBFileEntry) throws -> ImportItem {
    let path = directory + "/files/" + entry.name
    guard let data = FileManager.default.contents(atPath: path),
      data.count <= store.fileSizeLimit
    else { throw CLIError.failed(messages.importChanged("files/" + entry.name)) }
    let prepared = try Board.checkAppFile(bytes: [UInt8](data), mimeType: entry.mimeType)
    return .file(
      ImportedFile(
        name: entry.name, mimeType: prepared.mimeType, bytes: prepared.bytes, acl: entry.acl,
        createDate: entry.createDate, updateDate: entry.updateDate))
  }

  private func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  // MARK: The app's board

  /// Checks the export's `Thread` and `Comment` as the board's (`BoardImport`) and numbers
  /// them; nil after a problem. A class not of the board's shape is one line saying how to
  /// import it as the app's own.
  private mutating func checkBoard(has classes: Set<String>) throws -> BoardNumbering? {
    let before = problemCount
    var numbering = BoardNumbering()
    if classes.contains("Thread") {
      var shapeProblem: String?
      forEach("Thread.json") { reader, fields, _ in
        if shapeProblem == nil, let field = BoardImport.threadMismatch(reader.bare(fields)) {
          shapeProblem = field
        }
      }
      if let field = shapeProblem {
        problem(messages.importNotBoardShaped("Thread", field: field))
        return nil
      }
    }
    if classes.contains("Comment") {
      guard classes.contains("Thread") else {
        problem(messages.importNotBoardShaped("Comment", field: "thread"))
        return nil
      }
      var shapeProblem: String?
      forEach("Comment.json") { reader, fields, _ in
        if shapeProblem == nil, let field = BoardImport.commentMismatch(reader.bare(fields)) {
          shapeProblem = field
        }
      }
      if let field = shapeProblem {
        problem(messages.importNotBoardShaped("Comment", field: field))
        return nil
      }
    }
    guard problemCount == before else { return nil }
    // Threads: their dates, readers and whether an earlier run brought them.
    var seen = SeenIds()
    forEach("Thread.json") { reader, fields, index in
      guard
        let object = reader.object(
          fields, className: BoardImport.threadClass, file: "Thread.json", index: index,
          seen: &seen)
      else { return }
      let place = "Thread \(object.objectId)"
      // Known to its comments even when it has a problem of its own (said once, here).
      numbering.threadIndex[object.objectId] = Int32(numbering.threadIds.count)
      numbering.threadIds.append(object.objectId)
      numbering.threads[object.objectId] = BoardNumbering.Thread(
        createDate: object.createDate, lastActivity: object.createDate,
        readers: object.acl.readers)
      guard let author = BoardImport.author(object.fields, acl: object.acl) else {
        reader.problem(reader.messages.importNoAuthor(place))
        return
      }
      if let name = object.fields["fileName"]?.stringValue, reader.pictures[name] == nil {
        reader.problem(reader.messages.importNoPicture(place, name))
        return
      }
      do {
        let fields = try BoardImport.thread(
          object.fields, author: author, number: 1, comments: 0, lastActivity: 0,
          image: object.fields["fileName"]?.stringValue.flatMap { reader.pictures[$0] })
        let item = ImportItem.object(
          ImportedObject(
            className: object.className, objectId: object.objectId,
            createDate: object.createDate, updateDate: object.updateDate, acl: object.acl,
            fields: fields), anonymousId: nil)
        guard reader.checked(item, place) else { return }
      } catch let error as DatastoreError {
        reader.problem("\(place): \(reader.messages.failure(error))")
        return
      } catch {
        reader.problem("\(place): \(reader.describe(error))")
        return
      }
    }
    if classes.contains("Comment") {
      var seen = SeenIds()
      forEach("Comment.json") { reader, fields, index in
        guard
          let object = reader.object(
            fields, className: BoardImport.commentClass, file: "Comment.json", index: index,
            seen: &seen)
        else { return }
        let place = "Comment \(object.objectId)"
        let threadId = object.fields["thread"]?.pointerId ?? ""
        guard let thread = numbering.threadIndex[threadId] else {
          reader.problem(reader.messages.importNoThread(place, threadId))
          return
        }
        guard let author = BoardImport.author(object.fields, acl: object.acl) else {
          reader.problem(reader.messages.importNoAuthor(place))
          return
        }
        guard let id = PackedId(object.objectId) else {
          reader.problem(
            "\(place): \(reader.messages.failure(DatastoreError(.invalid, field: "objectId")))")
          return
        }
        do {
          let fields = try BoardImport.comment(
            object.fields, author: author, threadId: threadId, number: 1)
          let item = ImportItem.object(
            ImportedObject(
              className: object.className, objectId: object.objectId,
              createDate: object.createDate, updateDate: object.updateDate, acl: object.acl,
              fields: fields), anonymousId: nil)
          guard reader.checked(item, place) else { return }
        } catch let error as DatastoreError {
          reader.problem("\(place): \(reader.messages.failure(error))")
          return
        } catch {
          reader.problem("\(place): \(reader.describe(error))")
          return
        }
        numbering.comments.append((id, thread, object.createDate, 0))
      }
    }
    guard problemCount == before else { return nil }
    try number(&numbering)
    return numbering
  }

  /// An exported object's own fields, without objectId, dates and ACL.
  private func bare(_ fields: [String: JSONValue]) -> [String: JSONValue] {
    var rest = fields
    for field in ["objectId", "createDate", "updateDate", "acl"] { rest[field] = nil }
    return rest
  }

  /// Numbers the threads after the board's last in date order, and each thread's comments from
  /// 1 in date order; a thread an earlier run brought keeps its fields and its comments their
  /// numbers (new ones follow its last).
  private func number(_ numbering: inout BoardNumbering) throws {
    // Threads an earlier run brought keep their number; of their row only what the board keeps
    // itself and the export cannot say again is held.
    for start in stride(from: 0, to: numbering.threadIds.count, by: 500) {
      let chunk = Array(numbering.threadIds[start..<min(start + 500, numbering.threadIds.count)])
      for (id, object) in try store.storedObjects(chunk) {
        guard object.className == BoardImport.threadClass,
          let number = object.fields["number"]?.intValue
        else { continue }
        numbering.threads[id]!.number = number
        numbering.threads[id]!.comments = object.fields["lastCommentNumber"]?.intValue ?? 0
        numbering.threads[id]!.stored = object.fields.filter {
          ["commentCount", "lastCommentNumber", "lastActivity"].contains($0.key)
        }
      }
    }
    var next = try store.counter(BoardImport.threadSequence)
    let order = numbering.threadIds.sorted {
      let a = numbering.threads[$0]!
      let b = numbering.threads[$1]!
      return (a.createDate, $0) < (b.createDate, $1)
    }
    for id in order {
      if numbering.threads[id]!.stored == nil {
        next += 1
        numbering.threads[id]!.number = next
      }
      numbering.highest = max(numbering.highest, numbering.threads[id]!.number)
    }
    // Comments in date order within their thread.
    numbering.comments.sort { ($0.thread, $0.date, $0.id) < ($1.thread, $1.date, $1.id) }
    numbering.hasComments = !numbering.comments.isEmpty
    for index in numbering.comments.indices {
      let entry = numbering.comments[index]
      let threadId = numbering.threadIds[Int(entry.thread)]
      var thread = numbering.threads[threadId]!
      if thread.stored != nil {
        let id = BoardNumbering.idText(entry.id)
        if let object = try store.storedObjects([id])[id],
          object.className == BoardImport.commentClass,
          let number = object.fields["number"]?.intValue
        {
          numbering.comments[index].number = number
          continue
        }
      }
      thread.comments += 1
      thread.lastActivity = max(thread.lastActivity, entry.date)
      numbering.comments[index].number = thread.comments
      numbering.threads[threadId] = thread
    }
    numbering.comments.sort { $0.id < $1.id }
  }

  /// Writes `batch` in one transaction, read again from its file; outcomes into `tally`.
  mutating func write(_ batch: ImportBatch, tally: inout ImportTally) throws {
    writing = true
    switch batch {
    case .roles(let list):
      let outcomes = try store.importItems(list.map(\.item))
      for (outcome, entry) in zip(outcomes, list) {
        if let label = entry.label { tally.add(outcome, className: "role", label: label) }
      }
    case .file(let entry):
      let outcome = try store.importItems([try fileItem(entry)])[0]
      tally.add(outcome, className: "files", label: entry.name)
    case .users:
      var seen = SeenIds()
      try pull(["user.json"], tally: &tally) { reader, _, fields, index in
        reader.userItem(fields, index: index, seen: &seen).map { ($0, "user", $0.objectId) }
      }
    case .appClass(let file, let className):
      var seen = SeenIds()
      try pull([file], tally: &tally) { reader, _, fields, index in
        reader.object(fields, className: className, file: file, index: index, seen: &seen).map {
          (.object($0, anonymousId: nil), className, $0.objectId)
        }
      }
    case .board(let numbering):
      var seen = SeenIds()
      let files = ["Thread.json"] + (numbering.hasComments ? ["Comment.json"] : [])
      // The numbers given are not given again to threads posted later.
      let counter = ImportItem.counter(
        name: BoardImport.threadSequence, atLeast: numbering.highest)
      try pull(files, then: [counter], tally: &tally) { reader, file, fields, index in
        if index == 0 { seen = SeenIds() }
        return try reader.boardItem(fields, file: file, index: index, seen: &seen, numbering)
      }
    }
  }

  /// Reads `files` again, one object at a time, from inside one import transaction: each is
  /// made an item by `convert` (nil: none) and written, then `then` is; outcomes into `tally`.
  /// A problem now means the files changed since they were checked: the transaction is undone.
  private mutating func pull(
    _ files: [String], then tail: [ImportItem] = [], tally: inout ImportTally,
    _ convert: (inout NCMBExportReader, String, [String: JSONValue], Int) throws -> (
      ImportItem, String, String
    )?
  ) throws {
    let before = problemCount
    var fileIndex = 0
    var stream: NCMBExportStream?
    var rest = tail[...]
    var last: (className: String, label: String)?
    defer { stream?.close() }
    try store.importItems(
      from: { () throws -> ImportItem? in
        while fileIndex < files.count {
          let file = files[fileIndex]
          if stream == nil {
            stream = NCMBExportStream(path: directory + "/" + file)
            guard stream != nil else { throw CLIError.failed(messages.importChanged(file)) }
          }
          let index = stream!.index
          let fields: [String: JSONValue]?
          do {
            fields = try stream!.next()
          } catch {
            throw CLIError.failed(messages.importChanged(file))
          }
          guard let fields else {
            stream!.close()
            stream = nil
            fileIndex += 1
            continue
          }
          let made = try convert(&self, file, fields, index)
          guard problemCount == before else {
            throw CLIError.failed(messages.importChanged(file))
          }
          if let (item, className, label) = made {
            last = (className, label)
            return item
          }
        }
        last = nil
        return rest.popFirst()
      },
      outcome: { outcome in
        if let last { tally.add(outcome, className: last.className, label: last.label) }
      })
  }

  /// A user of `user.json` as an item (its anonymous id kept, its secrets not); nil after a
  /// problem.
  private mutating func userItem(_ fields: [String: JSONValue], index: Int, seen: inout SeenIds)
    -> ImportItem?
  {
    guard
      var object = object(
        fields, className: User.className, file: "user.json", index: index, seen: &seen)
    else { return nil }
    let anonymous = fields["authData"]?.objectValue?["anonymous"]?.objectValue?["id"]
    var data = object.fields
    for secret in ["authData", "password", "sessionToken"] { data[secret] = nil }
    let userName = data["userName"]?.stringValue
    object = ImportedObject(
      className: object.className, objectId: object.objectId, createDate: object.createDate,
      updateDate: object.updateDate, acl: object.acl, fields: data)
    guard let anonymous else {
      if !writing { needPassword.append((userName ?? object.objectId, object.objectId)) }
      return .object(object, anonymousId: nil)
    }
    guard let id = anonymous.stringValue else {
      problem(
        messages.importBadField(
          "user.json \(object.objectId)", "authData.anonymous.id", "not a string"))
      return nil
    }
    return .object(object, anonymousId: id)
  }

  /// A thread or comment of the app's board as the board keeps it (`BoardImport`), numbered
  /// as `numbering` says; a comment's readers are its thread's (the board's rule) unless both
  /// are public, when its own are kept.
  private mutating func boardItem(
    _ fields: [String: JSONValue], file: String, index: Int, seen: inout SeenIds,
    _ numbering: BoardNumbering
  ) throws -> (ImportItem, String, String)? {
    let isThread = file == "Thread.json"
    let className = isThread ? BoardImport.threadClass : BoardImport.commentClass
    guard
      let object = object(fields, className: className, file: file, index: index, seen: &seen),
      let author = BoardImport.author(object.fields, acl: object.acl)
    else { return nil }
    var acl = object.acl
    let board: [String: JSONValue]
    if isThread {
      guard let thread = numbering.threads[object.objectId] else { return nil }
      if let stored = thread.stored {
        var given = try BoardImport.thread(
          object.fields, author: author, number: thread.number, comments: thread.comments,
          lastActivity: thread.lastActivity,
          image: object.fields["fileName"]?.stringValue.flatMap { pictures[$0] })
        for field in ["commentCount", "lastCommentNumber", "lastActivity"] {
          given[field] = stored[field]
        }
        board = given
      } else {
        board = try BoardImport.thread(
          object.fields, author: author, number: thread.number, comments: thread.comments,
          lastActivity: thread.lastActivity,
          image: object.fields["fileName"]?.stringValue.flatMap { pictures[$0] })
      }
    } else {
      guard let threadId = object.fields["thread"]?.pointerId,
        let thread = numbering.threads[threadId],
        let number = numbering.number(ofComment: object.objectId)
      else { return nil }
      if !(thread.readers.contains("*") && acl.readers.contains("*")) {
        acl = ACL(readers: thread.readers, writers: acl.writers)
      }
      board = try BoardImport.comment(
        object.fields, author: author, threadId: threadId, number: number)
    }
    let item = ImportItem.object(
      ImportedObject(
        className: className, objectId: object.objectId, createDate: object.createDate,
        updateDate: object.updateDate, acl: acl, fields: board), anonymousId: nil)
    return (item, className, object.objectId)
  }
}

extension BoardNumbering {
  /// The 16 characters of a packed id.
  static func idText(_ id: PackedId) -> String {
    var bytes: [UInt8] = []
    for shift in stride(from: 56, through: 0, by: -8) {
      bytes.append(UInt8(id.high >> UInt64(shift) & 0xFF))
    }
    for shift in stride(from: 56, through: 0, by: -8) {
      bytes.append(UInt8(id.low >> UInt64(shift) & 0xFF))
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension ImportItem {
  var objectId: String {
    if case .object(let object, _) = self { return object.objectId }
    return ""
  }
}
