/// `forum import`, once for both SQL engines: each item looked up, compared with what is
/// stored (decoded by name, as every read is) and written only where nothing is
/// (`ImportOutcome`). Each engine says where its rows live and how one is written as given
/// (SQLite keeps a parent's counters apart; PostgreSQL puts a private file in its owner-only
/// table), and who may import.
protocol SQLImport: SQLFinding, SQLFiles {
  /// Runs the batch in one transaction as the board's owner (anyone else: `E403001`).
  func importing(_ batch: () throws -> Void) throws

  /// The object `objectId`, of any class and table, as the object columns (`objectColumns`).
  func storedObject(_ objectId: String) -> SQL

  /// The user whose anonymous id hashes to `secretHash`, as `user_id`.
  func identityOwner(_ secretHash: [UInt8]) -> SQL

  /// Writes `object` as given, and its anonymous id's hash when there is one.
  func insertImported(_ object: ImportedObject, identityHash: [UInt8]?) throws

  /// The file `name`, in either table, as the file columns (`fileColumns`) and `data`.
  func storedFile(_ name: String) -> SQL

  func insertImported(_ file: ImportedFile) throws

  /// Adds the membership; false when it was there.
  func importRoleMember(_ role: String, _ userId: String) throws -> Bool

  /// Moves the counter up to `value`; false when it was there already.
  func raiseCounter(_ name: String, to value: Int64) throws -> Bool

  /// Counts `parent` up for `children` the batch imported under it, as posting them would
  /// have (SQLite's insert triggers count each child as it comes: nothing more to do).
  func countUp(_ parent: String, by rule: ChildRule, for children: ImportedChildren) throws
}

/// The children a batch imported under one parent the batch did not import itself (a thread an
/// earlier run brought): how many, and the highest number and date among them.
struct ImportedChildren {
  var count: Int64 = 0
  var lastNumber: Int64 = 0
  var lastActivity: Int64 = 0
}

extension SQLImport {
  func importItems(
    next: () throws -> ImportItem?, outcome: (ImportOutcome) throws -> Void
  ) throws {
    try importing {
      // A parent the batch imports comes with its counts as given; one it does not is counted
      // up for the children the batch brings it, at the end.
      var parents = Set<String>()
      var childrenOf: [String: (rule: ChildRule, children: ImportedChildren)] = [:]
      while let item = try next() {
        switch item {
        case .object(let object, let anonymousId):
          let result = try importObject(object, anonymousId: anonymousId)
          if result == .imported {
            if !rules.parentRules(of: object.className).isEmpty { parents.insert(object.objectId) }
            if let rule = rules.childRule(of: object.className),
              let parent = object.fields[rule.parentField]?.pointerId
            {
              var entry = childrenOf[parent] ?? (rule, ImportedChildren())
              entry.children.count += 1
              entry.children.lastNumber = max(
                entry.children.lastNumber, object.fields[rule.numberField]?.intValue ?? 0)
              entry.children.lastActivity = max(entry.children.lastActivity, object.createDate)
              childrenOf[parent] = entry
            }
          }
          try outcome(result)
        case .roleMember(let role, let userId):
          try outcome(try importRoleMember(role, userId) ? .imported : .unchanged)
        case .file(let file):
          try outcome(try importFile(file))
        case .counter(let name, let value):
          try outcome(try raiseCounter(name, to: value) ? .imported : .unchanged)
        }
      }
      for (parent, entry) in childrenOf where !parents.contains(parent) {
        try countUp(parent, by: entry.rule, for: entry.children)
      }
    }
  }

  func storedObjects(_ objectIds: [String]) throws -> [String: ImportedObject] {
    var found: [String: ImportedObject] = [:]
    for objectId in objectIds {
      // A row that cannot be read whole (written by hand) is not one an import can match.
      guard let stored = try stored(objectId), !stored.isDamaged else { continue }
      found[objectId] = ImportedObject(stored)
    }
    return found
  }

  private func stored(_ objectId: String) throws -> DataObject? {
    try firstRow(storedObject(objectId), StoredObject.init(row:)).map { object($0) }
  }

  private func importObject(_ object: ImportedObject, anonymousId: String?) throws
    -> ImportOutcome
  {
    let identityHash = anonymousId.map(SHA256.hash)
    var identityPresent = false
    if let identityHash {
      let owner = try firstRow(identityOwner(identityHash)) { $0.text("user_id") } ?? nil
      if let owner, owner != object.objectId { return .conflict }
      identityPresent = owner != nil
    }
    if let stored = try stored(object.objectId) {
      let same = !stored.isDamaged && ImportedObject(stored) == object
      return same && (anonymousId == nil || identityPresent) ? .unchanged : .conflict
    }
    try insertImported(object, identityHash: identityPresent ? nil : identityHash)
    return .imported
  }

  private func importFile(_ file: ImportedFile) throws -> ImportOutcome {
    let stored = try firstRow(storedFile(file.name)) { ($0.bytes("data"), fileInfo(row: $0)) }
    guard let (bytes, info) = stored else {
      try insertImported(file)
      return .imported
    }
    let sameDates =
      !file.datesGiven
      || (info.createDate == file.createDate && info.updateDate == file.updateDate)
    let same =
      info.mimeType == file.mimeType && sameDates && info.acl == file.acl && bytes == file.bytes
    return same ? .unchanged : .conflict
  }
}

extension ImportedObject {
  /// A stored object as an import names it.
  init(_ stored: DataObject) {
    self.init(
      className: stored.className, objectId: stored.objectId, createDate: stored.createDate,
      updateDate: stored.updateDate, acl: stored.acl, fields: stored.fields)
  }
}
