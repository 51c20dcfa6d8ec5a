import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

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
  var pictures: [String: JSONValue] = [:]
  /// True while writing: a problem then means the export changed since it was checked.
  private(set) var writing = false
  /// The users of `user.json` with no anonymous id: they need a password to sign in.
  var needPassword: [(name: String, objectId: String)] = []
  /// The files of `files.json` refused as written (another file has the name): a thread that
  /// shows one is refused too, or it would show (and its deletion take) another's file.
  var refusedFiles: Set<String> = []

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

  mutating func problem(_ text: String) {
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
      // Each name once (`dm @name` finds one): in the export, and on the board but for the
      // user itself. Names that differ only in case are two, as on NCMB (a loose `@name` is
      // then said to be ambiguous, never sent to one of them).
      var named: [String: String] = [:]
      let whole = forEach("user.json") { reader, fields, index in
        guard let item = reader.userItem(fields, index: index, seen: &seen),
          reader.checked(item, "user \(item.objectId)"),
          case .object(let user, _) = item, let name = user.fields["userName"]?.stringValue
        else { return }
        if let other = named[name] {
          reader.problem(
            reader.messages.importNameTaken(
              "user.json \(user.objectId)", name, by: other, onBoard: false))
        } else {
          named[name] = user.objectId
        }
      }
      let taken = try store.users(named: Set(named.keys))
      for (name, id) in taken.sorted(by: { $0.key < $1.key }) where named[name] != id {
        problem(
          messages.importNameTaken("user.json \(named[name]!)", name, by: id, onBoard: true))
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
  mutating func forEach(
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
  mutating func readBounded(_ path: String, limit: Int, shown: String) -> [UInt8]? {
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
  mutating func object(
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
  mutating func checked(_ item: ImportItem, _ place: String) -> Bool {
    checked(place) { item }
  }

  /// The datastore's checks on the item `make` makes; false after a problem (said under
  /// `place`), in making it or in the checks.
  mutating func checked(_ place: String, _ make: () throws -> ImportItem) -> Bool {
    do {
      try store.check(try make())
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

  /// What is wrong with the app's data, in the reader's language: a reason of the catalogue
  /// as said of data (a file is any file here, not an image), else the words from below.
  func describe(_ error: Error) -> String {
    guard let error = error as? DatastoreError else { return String(describing: error) }
    if let said = error.reason?.wording(field: error.field, for: .program) {
      return said.text(japanese: messages.japanese)
    }
    return error.detail ?? error.message
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
      if outcome == .conflict { refusedFiles.insert(entry.name) }
      tally.add(outcome, className: "files", label: entry.name)
    case .users:
      var seen = SeenIds()
      try pull(["user.json"], tally: &tally) { reader, _, fields, index, _ in
        reader.userItem(fields, index: index, seen: &seen).map {
          .write($0, className: "user", label: $0.objectId)
        }
      }
    case .appClass(let file, let className):
      var seen = SeenIds()
      try pull([file], tally: &tally) { reader, _, fields, index, _ in
        reader.object(fields, className: className, file: file, index: index, seen: &seen).map {
          .write(.object($0, anonymousId: nil), className: className, label: $0.objectId)
        }
      }
    case .board(let numbering):
      var seen = SeenIds()
      let files = ["Thread.json"] + (numbering.hasComments ? ["Comment.json"] : [])
      // The numbers given are not given again to threads posted later.
      let counter = ImportItem.counter(
        name: BoardImport.threadSequence, atLeast: numbering.highest)
      try pull(files, then: [counter], tally: &tally) { reader, file, fields, index, refused in
        if index == 0 { seen = SeenIds() }
        return try reader.boardItem(
          fields, file: file, index: index, seen: &seen, numbering, refused: refused)
      }
    }
  }

  /// Reads `files` again, one object at a time, from inside one import transaction: each is
  /// made an item by `convert` (nil: none) and written, or refused unwritten; then `then` is
  /// written; outcomes into `tally`. `convert` is told what the batch refused so far
  /// (`Class/label`). A problem now means the files changed since they were checked: the
  /// transaction is undone.
  private mutating func pull(
    _ files: [String], then tail: [ImportItem] = [], tally: inout ImportTally,
    _ convert: (inout NCMBExportReader, String, [String: JSONValue], Int, Set<String>) throws
      -> Pulled?
  ) throws {
    let before = problemCount
    var fileIndex = 0
    var stream: NCMBExportStream?
    var rest = tail[...]
    var last: (className: String, label: String)?
    var refused = Set<String>()
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
          let made = try convert(&self, file, fields, index, refused)
          guard problemCount == before else {
            throw CLIError.failed(messages.importChanged(file))
          }
          switch made {
          case .write(let item, let className, let label)?:
            last = (className, label)
            return item
          case .refused(let className, let label)?:
            refused.insert(className + "/" + label)
            tally.add(.conflict, className: className, label: label, hangsOnRefused: true)
          case nil: break
          }
        }
        last = nil
        return rest.popFirst()
      },
      outcome: { outcome in
        guard let last else { return }
        if outcome == .conflict { refused.insert(last.className + "/" + last.label) }
        tally.add(outcome, className: last.className, label: last.label)
      })
  }
}

/// What `NCMBExportReader.pull` makes of one exported object.
enum Pulled {
  case write(ImportItem, className: String, label: String)
  /// Nothing written: what it hangs on (its thread, its picture) was refused.
  case refused(className: String, label: String)
}

extension ImportedObject {
  /// The same object with other fields (and readers and writers).
  func with(fields: [String: JSONValue], acl: ACL? = nil) -> ImportedObject {
    ImportedObject(
      className: className, objectId: objectId, createDate: createDate, updateDate: updateDate,
      acl: acl ?? self.acl, fields: fields)
  }
}
