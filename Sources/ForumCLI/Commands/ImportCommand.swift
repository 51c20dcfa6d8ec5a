import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// `import ncmb DIR`: the board's owner brings an NCMB console export onto the board: every
/// `<Class>.json` with its objectIds, dates and ACLs, `user.json` (anonymous ids kept, hashed),
/// `role.json` (memberships), `files.json` with its `files/` folder. Everything is read and
/// checked first (a bad input is one line each and nothing is written); then each class is one
/// transaction (users, roles, each file likewise), so a run that is killed leaves whole classes
/// and a second run finishes it. Objects already there exactly so are "unchanged".
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
        + "DIR/files/ come too. The board's own classes (Thread, Comment, …) must be renamed: "
        + "--rename Thread=AppThread,Comment=AppComment. A second run changes nothing.",
      "各 <Class>.json を objectId・日時・ACL・ポインタ・リレーションのまま取り込みます。"
        + "user.json の匿名ユーザーは同じ ID で再びサインインでき、role.json のロールと "
        + "files.json (DIR/files/) も取り込みます。掲示板自身のクラス (Thread, Comment など) は "
        + "--rename Thread=AppThread,Comment=AppComment で名前を変えてください。"
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
      directory: ImageFile.expandTilde(dir), renames: renames, messages: messages,
      fileSizeLimit: store.fileSizeLimit)
    let plan = reader.read()
    // The datastore's own checks (ids, field names, values), on everything before any write.
    var problems = reader.problems
    for batch in plan.batches {
      for (item, label) in zip(batch.items, batch.labels) {
        do {
          try store.check(item)
        } catch let error as DatastoreError {
          problems.append("\(batch.name) \(label ?? ""): \(messages.failure(error))")
        }
      }
    }
    guard problems.isEmpty else {
      for problem in problems { ForumMain.writeError(SafeText.sanitize(problem)) }
      throw CLIError.failed(messages.importNothingWritten(problems.count))
    }
    let pause = ProcessInfo.processInfo.environment["FORUM_IMPORT_TEST_PAUSE"].flatMap(Double.init)
    var first = true
    var counts: [ImportOutcome: Int] = [:]
    var reasons: [String] = []
    for (index, batch) in plan.batches.enumerated() {
      let outcomes = try store.importItems(batch.items)
      for (outcome, label) in zip(outcomes, batch.labels) where label != nil {
        counts[outcome, default: 0] += 1
        if outcome == .conflict { reasons.append(label!) }
      }
      // One line a class: the files' batches (one each) are added up.
      if index + 1 < plan.batches.count, plan.batches[index + 1].name == batch.name { continue }
      print(
        messages.importLine(
          SafeText.sanitize(batch.name), imported: counts[.imported] ?? 0,
          unchanged: counts[.unchanged] ?? 0, refused: counts[.conflict] ?? 0,
          conflicts: reasons.map { SafeText.sanitize($0) }))
      counts = [:]
      reasons = []
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

/// One transaction's worth of an export: its items, and for each the label its refusal is
/// reported under (nil: not counted, such as a role's memberships).
struct ImportBatch {
  let name: String
  var items: [ImportItem] = []
  var labels: [String?] = []
}

struct ImportPlan {
  var batches: [ImportBatch] = []
  var notes: [String] = []
  var needPassword: [(name: String, objectId: String)] = []
}

/// Reads an NCMB export directory and checks every part of it before anything is written.
struct NCMBExportReader {
  let directory: String
  let renames: [String: String]
  let messages: Messages
  let fileSizeLimit: Int
  private(set) var problems: [String] = []

  /// The largest JSON file read: NCMB's export of a class (about 300 bytes an object) this
  /// size holds some 300,000 objects, all checked in memory before the first is written.
  static let maximumJSONBytes = 100 * 1024 * 1024
  static let reservedClasses: Set<String> = Board.boardClasses.union([
    "user", "role", "file", "installation", "push",
  ])
  static let skipped: Set<String> = ["installation.json", "push.json"]

  init(directory: String, renames: [String: String], messages: Messages, fileSizeLimit: Int) {
    self.directory = directory
    self.renames = renames
    self.messages = messages
    self.fileSizeLimit = fileSizeLimit
  }

  mutating func read() -> ImportPlan {
    var plan = ImportPlan()
    var info = stat()
    guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
      problems.append(messages.importNoDirectory(directory))
      return plan
    }
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
      .filter { $0.hasSuffix(".json") }.sorted()
    for (from, to) in renames.sorted(by: { $0.key < $1.key }) {
      if !names.contains(from + ".json") { problems.append(messages.importRenameUnknown(from)) }
      if NCMBExportReader.reservedClasses.contains(to) || names.contains(to + ".json") {
        problems.append(messages.importRenameTaken(from, to))
      }
    }
    if names.contains("user.json") { readUsers(&plan) }
    if names.contains("role.json") { readRoles(&plan) }
    if names.contains("files.json") { readFiles(&plan) }
    for name in names {
      if ["user.json", "role.json", "files.json"].contains(name) { continue }
      if NCMBExportReader.skipped.contains(name) {
        plan.notes.append(messages.importSkipped(name))
        continue
      }
      readClass(String(name.dropLast(5)), &plan)
    }
    return plan
  }

  /// The `results` of `name` (`{"results":[…]}`), each an object; nil after a problem.
  private mutating func results(_ name: String) -> [[String: JSONValue]]? {
    let path = directory + "/" + name
    guard let bytes = readBounded(path, limit: NCMBExportReader.maximumJSONBytes, shown: name)
    else { return nil }
    guard let text = String(validating: bytes, as: UTF8.self),
      let value = try? JSONValue.parse(text)
    else {
      problems.append(messages.importBadJSON(name))
      return nil
    }
    let list: [JSONValue]
    if case .array(let items) = value {
      list = items
    } else if case .array(let items)? = value.objectValue?["results"] {
      list = items
    } else {
      problems.append(messages.importNoResults(name))
      return nil
    }
    var objects: [[String: JSONValue]] = []
    for (index, item) in list.enumerated() {
      guard let object = item.objectValue else {
        problems.append(messages.importNotAnObject(name, index: index))
        return nil
      }
      objects.append(object)
    }
    return objects
  }

  /// The bytes of `path`, or nil with a problem said: missing, not a regular file, over `limit`.
  private mutating func readBounded(_ path: String, limit: Int, shown: String) -> [UInt8]? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      problems.append(messages.importMissing(shown))
      return nil
    }
    guard Int(info.st_size) <= limit else {
      problems.append(messages.importTooLarge(shown, bytes: Int(info.st_size), limit: limit))
      return nil
    }
    guard let data = FileManager.default.contents(atPath: path), data.count <= limit else {
      problems.append(messages.importMissing(shown))
      return nil
    }
    return [UInt8](data)
  }

  /// An object's system fields and the rest; nil after a problem (said with its place).
  private mutating func object(
    _ fields: [String: JSONValue], className: String, file: String, index: Int,
    seen: inout Set<String>
  ) -> ImportedObject? {
    let place = "\(file) #\(index + 1)"
    guard let objectId = fields["objectId"]?.stringValue else {
      problems.append(messages.importMissingField(place, "objectId"))
      return nil
    }
    let at = "\(file) \(objectId)"
    guard seen.insert(objectId).inserted else {
      problems.append(messages.importDuplicate(file, objectId))
      return nil
    }
    var dates: [Int64] = []
    for field in ["createDate", "updateDate"] {
      guard let text = fields[field]?.stringValue ?? fields[field]?.objectValue?["iso"]?.stringValue
      else {
        problems.append(messages.importMissingField(at, field))
        return nil
      }
      guard let milliseconds = NCMBDate.milliseconds(text) else {
        problems.append(messages.importBadField(at, field, "not a date yyyy-MM-ddTHH:mm:ss.SSSZ"))
        return nil
      }
      dates.append(milliseconds)
    }
    var acl = ACL.publicReadWrite
    if let given = fields["acl"] {
      do {
        acl = try ACL(json: given)
      } catch {
        problems.append(messages.importBadField(at, "acl", describe(error)))
        return nil
      }
    }
    var rest = fields
    for field in ["objectId", "createDate", "updateDate", "acl"] { rest[field] = nil }
    return ImportedObject(
      className: className, objectId: objectId, createDate: dates[0], updateDate: dates[1],
      acl: acl, fields: rest.mapValues(renamed))
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

  private mutating func readClass(_ exported: String, _ plan: inout ImportPlan) {
    let file = exported + ".json"
    let className = renames[exported] ?? exported
    guard renames[exported] != nil || !NCMBExportReader.reservedClasses.contains(exported) else {
      problems.append(messages.importBoardClass(exported))
      return
    }
    guard className.utf8.count <= 64, let first = className.utf8.first,
      (0x41...0x5A).contains(first) || (0x61...0x7A).contains(first),
      className.utf8.allSatisfy({
        (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
          || $0 == 0x5F
      })
    else {
      problems.append(messages.importBadField(file, "className", "not a class name"))
      return
    }
    guard let list = results(file) else { return }
    var batch = ImportBatch(name: className)
    var seen = Set<String>()
    for (index, fields) in list.enumerated() {
      guard
        let object = object(
          fields, className: className, file: file, index: index, seen: &seen)
      else { continue }
      batch.items.append(.object(object, anonymousId: nil))
      batch.labels.append(object.objectId)
    }
    plan.batches.append(batch)
  }

  private mutating func readUsers(_ plan: inout ImportPlan) {
    guard let list = results("user.json") else { return }
    var batch = ImportBatch(name: "user")
    var seen = Set<String>()
    for (index, fields) in list.enumerated() {
      guard
        var object = object(
          fields, className: User.className, file: "user.json", index: index, seen: &seen)
      else { continue }
      let anonymous = fields["authData"]?.objectValue?["anonymous"]?.objectValue?["id"]
      var data = object.fields
      for secret in ["authData", "password", "sessionToken"] { data[secret] = nil }
      let userName = data["userName"]?.stringValue
      object = ImportedObject(
        className: object.className, objectId: object.objectId, createDate: object.createDate,
        updateDate: object.updateDate, acl: object.acl, fields: data)
      if let anonymous {
        guard let id = anonymous.stringValue else {
          problems.append(
            messages.importBadField(
              "user.json \(object.objectId)", "authData.anonymous.id", "not a string"))
          continue
        }
        batch.items.append(.object(object, anonymousId: id))
      } else {
        batch.items.append(.object(object, anonymousId: nil))
        plan.needPassword.append((userName ?? object.objectId, object.objectId))
      }
      batch.labels.append(object.objectId)
    }
    plan.batches.append(batch)
  }

  private mutating func readRoles(_ plan: inout ImportPlan) {
    guard let list = results("role.json") else { return }
    var batch = ImportBatch(name: "role")
    var seen = Set<String>()
    var usersOf: [String: Set<String>] = [:]
    var childRoles: [String: [String]] = [:]
    var nameOf: [String: String] = [:]
    for (index, fields) in list.enumerated() {
      guard
        let object = object(fields, className: "role", file: "role.json", index: index, seen: &seen)
      else { continue }
      let at = "role.json \(object.objectId)"
      guard let roleName = fields["roleName"]?.stringValue, !roleName.isEmpty,
        roleName.utf8.count <= 64,
        roleName.utf8.allSatisfy({
          (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            || $0 == 0x5F || $0 == 0x2D
        })
      else {
        problems.append(messages.importBadField(at, "roleName", "letters, digits, _ or -"))
        continue
      }
      guard roleName != "moderator" else {
        problems.append(messages.importModeratorRole(at))
        continue
      }
      nameOf[object.objectId] = roleName
      usersOf[roleName] = Set(NCMBExportReader.related(fields["belongUser"]))
      childRoles[roleName] = NCMBExportReader.related(fields["belongRole"])
      batch.items.append(.object(object, anonymousId: nil))
      batch.labels.append(object.objectId)
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
        batch.items.append(.roleMember(role: role, userId: userId))
        batch.labels.append(nil)
      }
    }
    plan.batches.append(batch)
  }

  /// The objectIds a relation's `objects` point at (none when the export kept only its class).
  static func related(_ value: JSONValue?) -> [String] {
    guard case .array(let objects)? = value?.objectValue?["objects"] else { return [] }
    return objects.compactMap { $0.pointerId }
  }

  private mutating func readFiles(_ plan: inout ImportPlan) {
    guard let list = results("files.json") else { return }
    let folder = directory + "/files"
    let root = realPath(folder)
    var seen = Set<String>()
    for (index, fields) in list.enumerated() {
      guard let name = fields["fileName"]?.stringValue else {
        problems.append(messages.importMissingField("files.json #\(index + 1)", "fileName"))
        continue
      }
      let at = "files.json \(name)"
      let path = folder + "/" + name
      // A name naming a place outside DIR/files (`../x`, a link out of it) is refused.
      let outside =
        name.contains("/") || name == ".." || name == "."
        || (access(path, F_OK) == 0 && !(realPath(path) ?? "").hasPrefix((root ?? "\u{0}") + "/"))
      guard !outside else {
        problems.append(messages.importEscapes(at))
        continue
      }
      guard seen.insert(name).inserted else {
        problems.append(messages.importDuplicate("files.json", name))
        continue
      }
      guard let bytes = readBounded(path, limit: fileSizeLimit, shown: "files/" + name) else {
        continue
      }
      if let size = fields["fileSize"]?.intValue, size != Int64(bytes.count) {
        problems.append(
          messages.importBadField(at, "fileSize", "says \(size), files/\(name) has \(bytes.count)"))
        continue
      }
      var acl = ACL.publicReadWrite
      if let given = fields["acl"] {
        do {
          acl = try ACL(json: given)
        } catch {
          problems.append(messages.importBadField(at, "acl", describe(error)))
          continue
        }
      }
      let mimeType = fields["mimeType"]?.stringValue ?? "application/octet-stream"
      let prepared: (bytes: [UInt8], mimeType: String)
      do {
        prepared = try Board.checkAppFile(bytes: bytes, mimeType: mimeType)
      } catch let rejection as ImageRejection {
        problems.append(
          messages.importBadField(at, "file", rejection.wording.text(japanese: messages.japanese)))
        continue
      } catch {
        problems.append(messages.importBadField(at, "file", describe(error)))
        continue
      }
      let now = BackendDate.now()
      var dates: [Int64] = []
      for field in ["createDate", "updateDate"] {
        let text = fields[field]?.stringValue ?? fields[field]?.objectValue?["iso"]?.stringValue
        dates.append(text.flatMap(NCMBDate.milliseconds) ?? now)
      }
      // Each file is its own transaction (their lines are added up under "files").
      var batch = ImportBatch(name: "files")
      batch.items.append(
        .file(
          ImportedFile(
            name: name, mimeType: prepared.mimeType, bytes: prepared.bytes, acl: acl,
            createDate: dates[0], updateDate: dates[1])))
      batch.labels.append(name)
      plan.batches.append(batch)
    }
  }

  private func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }
}
