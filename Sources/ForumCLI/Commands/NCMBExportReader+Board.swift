import Datastore
import Forum

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
/// The app's own board: its `Thread` and `Comment` as the board's threads and comments.
extension NCMBExportReader {
  /// Checks the export's `Thread` and `Comment` as the board's (`BoardImport`) and numbers
  /// them; nil after a problem. A class not of the board's shape is one line saying how to
  /// import it as the app's own.
  mutating func checkBoard(has classes: Set<String>) throws -> BoardNumbering? {
    let before = problemCount
    var numbering = BoardNumbering()
    if classes.contains("Thread"), !boardShaped("Thread", BoardImport.threadMismatch) {
      return nil
    }
    if classes.contains("Comment") {
      guard classes.contains("Thread") else {
        problem(messages.importNotBoardShaped("Comment", field: "thread"))
        return nil
      }
      guard boardShaped("Comment", BoardImport.commentMismatch) else { return nil }
    }
    guard problemCount == before else { return nil }
    // Threads: their dates, readers and whether an earlier run brought them.
    forEachObject(of: "Thread", as: BoardImport.threadClass) { reader, object, place in
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
      let fileName = object.fields["fileName"]?.stringValue
      let image = fileName.flatMap { reader.pictures[$0] }
      if let fileName, image == nil {
        reader.problem(reader.messages.importNoPicture(place, fileName))
        return
      }
      _ = reader.checkedAsBoard(object, place) {
        try BoardImport.thread(
          object.fields, author: author, number: 1, comments: 0, lastActivity: 0, image: image)
      }
    }
    if classes.contains("Comment") {
      forEachObject(of: "Comment", as: BoardImport.commentClass) { reader, object, place in
        let threadId = object.fields["thread"]?.pointerId ?? ""
        guard let thread = numbering.threadIndex[threadId] else {
          reader.problem(reader.messages.importNoThread(place, threadId))
          return
        }
        // The board shows a thread's comments to everyone who reads the thread: a comment
        // fewer may read would be shown to more than its ACL allows.
        let threadReaders = numbering.threads[threadId]?.readers ?? []
        guard object.acl.readers.contains("*") || threadReaders.isSubset(of: object.acl.readers)
        else {
          reader.problem(reader.messages.importNarrowerThanThread(place))
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
        let checked = reader.checkedAsBoard(object, place) {
          try BoardImport.comment(object.fields, author: author, threadId: threadId, number: 1)
        }
        guard checked else { return }
        numbering.comments.append((id, thread, object.createDate, 0))
      }
    }
    guard problemCount == before else { return nil }
    try number(&numbering)
    return numbering
  }

  /// Each object of the app's `exported` class (`Thread` or `Comment`) as the board's
  /// `className`, with the place its problems are said under; one with a problem of its own
  /// (id, dates, ACL) is said and skipped.
  private mutating func forEachObject(
    of exported: String, as className: String,
    _ body: (inout NCMBExportReader, ImportedObject, String) -> Void
  ) {
    var seen = SeenIds()
    let file = exported + ".json"
    forEach(file) { reader, fields, index in
      guard
        let object = reader.object(
          fields, className: className, file: file, index: index, seen: &seen)
      else { return }
      body(&reader, object, "\(exported) \(object.objectId)")
    }
  }

  /// True when every object of `className`'s file has the board's shape (`mismatch` names the
  /// first field that has not); else one problem saying so.
  private mutating func boardShaped(
    _ className: String, _ mismatch: ([String: JSONValue]) -> String?
  ) -> Bool {
    var shapeProblem: String?
    forEach(className + ".json") { reader, fields, _ in
      if shapeProblem == nil { shapeProblem = mismatch(reader.bare(fields)) }
    }
    guard let field = shapeProblem else { return true }
    problem(messages.importNotBoardShaped(className, field: field))
    return false
  }

  /// The datastore's checks on `object` with the fields the board keeps (`board` makes them);
  /// false after a problem (said under `place`), in making them or in the checks.
  private mutating func checkedAsBoard(
    _ object: ImportedObject, _ place: String, _ board: () throws -> [String: JSONValue]
  ) -> Bool {
    checked(place) { .object(object.with(fields: try board()), anonymousId: nil) }
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
        let id = entry.id.text
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

  /// A thread or comment of the app's board as the board keeps it (`BoardImport`), numbered
  /// as `numbering` says; a comment's readers are its thread's (the board's rule) unless both
  /// are public, when its own are kept. Refused unwritten: a thread whose picture was refused
  /// (another file has its name), a comment whose thread was (another object has its id):
  /// either would be written into what is someone else's.
  mutating func boardItem(
    _ fields: [String: JSONValue], file: String, index: Int, seen: inout SeenIds,
    _ numbering: BoardNumbering, refused: Set<String>
  ) throws -> Pulled? {
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
      if let picture = object.fields["fileName"]?.stringValue, refusedFiles.contains(picture) {
        return .refused(className: className, label: object.objectId)
      }
      var given = try BoardImport.thread(
        object.fields, author: author, number: thread.number, comments: thread.comments,
        lastActivity: thread.lastActivity,
        image: object.fields["fileName"]?.stringValue.flatMap { pictures[$0] })
      if let stored = thread.stored {
        for field in ["commentCount", "lastCommentNumber", "lastActivity"] {
          given[field] = stored[field]
        }
      }
      board = given
    } else {
      guard let threadId = object.fields["thread"]?.pointerId,
        let thread = numbering.threads[threadId],
        let number = numbering.number(ofComment: object.objectId)
      else { return nil }
      if refused.contains(BoardImport.threadClass + "/" + threadId) {
        return .refused(className: className, label: object.objectId)
      }
      if !(thread.readers.contains("*") && acl.readers.contains("*")) {
        acl = ACL(readers: thread.readers, writers: acl.writers)
      }
      board = try BoardImport.comment(
        object.fields, author: author, threadId: threadId, number: number)
    }
    return .write(
      .object(object.with(fields: board, acl: acl), anonymousId: nil), className: className,
      label: object.objectId)
  }
}
