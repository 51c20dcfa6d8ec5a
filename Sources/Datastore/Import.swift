#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// What an import brings onto a board as it was elsewhere (`forum import ncmb`): objects with
/// their own objectIds, dates and ACLs, users with their anonymous ids, role memberships and
/// files. The board's owner only (on SQLite whoever holds the file, on PostgreSQL the schema's
/// owner). Each batch is one transaction; an item already on the board exactly as given is
/// `unchanged`, one whose id is taken by something else is a `conflict` and writes nothing.
public enum ImportItem: Sendable {
  /// An object; a user (`User.className`) may bring its anonymous id, stored hashed as sign-up
  /// stores it, so the device holding the id signs in as this user.
  case object(ImportedObject, anonymousId: String?)
  /// `userId` holds `role` (both as the export named them).
  case roleMember(role: String, userId: String)
  case file(ImportedFile)
  /// The engine's counter `name` (a rule's sequence, such as the board's thread numbers) moved
  /// up to `atLeast` if it is below: the numbers an import gave are not given again.
  case counter(name: String, atLeast: Int64)
}

public struct ImportedObject: Equatable, Sendable {
  public let className: String
  public let objectId: String
  public let createDate: Int64
  public let updateDate: Int64
  public let acl: ACL
  public let fields: [String: JSONValue]

  public init(
    className: String, objectId: String, createDate: Int64, updateDate: Int64, acl: ACL,
    fields: [String: JSONValue]
  ) {
    self.className = className
    self.objectId = objectId
    self.createDate = createDate
    self.updateDate = updateDate
    self.acl = acl
    self.fields = fields
  }

  /// Whose storage the object counts toward: its one user writer, if it has exactly one.
  var creator: String? {
    let users = acl.writers.filter { $0 != "*" && !$0.hasPrefix("role:") }
    return users.count == 1 ? users.first : nil
  }
}

public struct ImportedFile: Equatable, Sendable {
  public let name: String
  public let mimeType: String
  public let bytes: [UInt8]
  public let acl: ACL
  public let createDate: Int64
  public let updateDate: Int64
  /// False when the export gave no dates (`createDate`, `updateDate` are then the run's time): a
  /// file already there with the same bytes, type and ACL is unchanged whatever its dates.
  public let datesGiven: Bool

  public init(
    name: String, mimeType: String, bytes: [UInt8], acl: ACL, createDate: Int64,
    updateDate: Int64, datesGiven: Bool = true
  ) {
    self.name = name
    self.mimeType = mimeType
    self.bytes = bytes
    self.acl = acl
    self.createDate = createDate
    self.updateDate = updateDate
    self.datesGiven = datesGiven
  }

  var creator: String? {
    let users = acl.writers.filter { $0 != "*" && !$0.hasPrefix("role:") }
    return users.count == 1 ? users.first : nil
  }
}

public enum ImportOutcome: Equatable, Sendable {
  case imported
  /// Already on the board exactly so (a second run).
  case unchanged
  /// Its id (or anonymous id, or file name) is on the board with other values: nothing written.
  case conflict
}

extension Datastore {
  /// Writes `items` in one transaction (`ImportItem`); the outcome of each, in order. Items are
  /// checked as the API checks a write (names, values, ACL principals, ids) before any is
  /// written: a bad one throws `E400002` naming it and nothing is written.
  public func importItems(_ items: [ImportItem]) throws -> [ImportOutcome] {
    for item in items { try check(item) }
    var outcomes: [ImportOutcome] = []
    var rest = items[...]
    try engine.importItems(next: { rest.popFirst() }, outcome: { outcomes.append($0) })
    return outcomes
  }

  /// `importItems` for a batch too large to hold: the items come one at a time from `next`
  /// (nil: the end) and are written as they come, in one transaction, each checked first; its
  /// outcome goes to `outcome`. A bad item throws and nothing of the batch is written.
  public func importItems(
    from next: () throws -> ImportItem?, outcome: (ImportOutcome) throws -> Void
  ) throws {
    try engine.importItems(
      next: {
        guard let item = try next() else { return nil }
        try check(item)
        return item
      }, outcome: outcome)
  }

  /// The objects stored under `objectIds` (any class, as the board's owner reads them): what an
  /// importer needs to give again what an earlier run gave (numbers the engine assigned).
  public func storedObjects(_ objectIds: [String]) throws -> [String: ImportedObject] {
    try engine.storedObjects(objectIds)
  }

  /// The users on the board named one of `names` (`userName`, exactly: `dm @name` finds that
  /// one), each with its id; read as the board's owner reads (a user only its own ACL lets read
  /// is found too; on PostgreSQL the connection's own rights still hold). By the `userName`
  /// index, 500 names a query.
  public func users(named names: Set<String>) throws -> [String: String] {
    var found: [String: String] = [:]
    let sorted = names.sorted()
    for start in stride(from: 0, to: sorted.count, by: 500) {
      var query = Query(className: User.className, limit: Query.maximumLimit)
      let chunk = sorted[start..<min(start + 500, sorted.count)]
      query.conditions = [.isIn("userName", chunk.map { .string($0) })]
      query.keys = ["userName"]
      for user in try master.find(query) {
        if let name = user["userName"]?.stringValue { found[name] = user.objectId }
      }
    }
    return found
  }

  /// Whether the board has any user yet. On SQLite its first user is its owner (`mod add`): a
  /// door that lets strangers in (`ssh`) makes no first user, or the first stranger would own
  /// the board.
  public func hasUsers() throws -> Bool {
    try !master.find(Query(className: User.className, limit: 1)).isEmpty
  }

  /// The engine's counter `name` (0 when it never counted).
  public func counter(_ name: String) throws -> Int64 {
    try engine.counter(name)
  }

  /// Checks one item as `importItems` will, writing nothing: an importer checks a whole export
  /// before its first batch.
  public func check(_ item: ImportItem) throws {
    switch item {
    case .object(let object, let anonymousId):
      try DatastoreClient.validate(className: object.className)
      guard Validation.isObjectId(object.objectId) else {
        throw DatastoreError.invalid("objectId")
      }
      try DatastoreClient.validate(fields: object.fields)
      if let anonymousId, !Validation.isSecret(anonymousId) {
        throw DatastoreError.invalid("authData.anonymous.id")
      }
    case .counter(let name, let value):
      guard Validation.isName(name), value >= 0 else { throw DatastoreError.invalid("counter") }
    case .roleMember(let role, let userId):
      guard Validation.isRoleName(role) else { throw DatastoreError.invalid("roleName") }
      guard Validation.isObjectId(userId) else { throw DatastoreError.invalid("objectId") }
    case .file(let file):
      guard Validation.isFileName(file.name) else { throw DatastoreError.invalid("fileName") }
      guard !file.bytes.isEmpty else { throw DatastoreError.empty("file") }
      guard file.bytes.count <= fileSizeLimit else {
        throw DatastoreError(
          .fileTooLarge,
          reason: StoreReason.fileTooLarge(bytes: file.bytes.count, limit: fileSizeLimit))
      }
      guard !file.mimeType.isEmpty, file.mimeType.utf8.count <= 100, file.mimeType.contains("/")
      else { throw DatastoreError.invalid("mimeType") }
    }
  }
}

/// NCMB's dates: `yyyy-MM-ddTHH:mm:ss.SSSZ` (UTC; a fraction of any length, or none).
public enum NCMBDate {
  /// The fields of `yyyy-MM-ddTHH:mm:ss[.fraction]` with no zone (the caller takes off a `Z`),
  /// the fraction's first three digits as milliseconds; nil when `bytes` is not such a time. A
  /// second of 60 (a leap second) is read; whoever needs it refuses it. Also the signature's
  /// timestamp (`NCMBSignature`), so that the importer and the server read one format one way.
  public static func fields(_ bytes: [UInt8]) -> (
    year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, millis: Int64
  )? {
    guard bytes.count >= 19, bytes.count <= 32 else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for byte in bytes[range] {
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int(byte - 0x30)
      }
      return value
    }
    let separators: [(Int, UInt8)] = [(4, 0x2D), (7, 0x2D), (10, 0x54), (13, 0x3A), (16, 0x3A)]
    for (index, separator) in separators where bytes[index] != separator { return nil }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    var millis: Int64 = 0
    if bytes.count > 19 {
      let fraction = bytes[20...]
      guard bytes[19] == UInt8(ascii: "."), !fraction.isEmpty,
        fraction.allSatisfy({ (0x30...0x39).contains($0) })
      else { return nil }
      for (place, byte) in zip([100, 10, 1] as [Int64], fraction) {
        millis += place * Int64(byte - 0x30)
      }
    }
    return (year, month, day, hour, minute, second, millis)
  }

  /// Milliseconds since 1970, nil when `text` is not such a date.
  public static func milliseconds(_ text: String) -> Int64? {
    var bytes = Array(text.utf8)
    guard bytes.last == UInt8(ascii: "Z") else { return nil }
    bytes.removeLast()
    guard let (year, month, day, hour, minute, second, millis) = fields(bytes), second < 60
    else { return nil }
    // Days from 1970-01-01 in the proleptic Gregorian calendar (civil-from-days inverted).
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = Int64(era * 146_097 + dayOfEra - 719_468)
    return (days * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1000 + millis
  }
}
