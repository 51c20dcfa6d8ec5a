import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// Who asks.
enum Caller: String, CaseIterable, Sendable {
  case owner
  case other
  case member
  case anonymous
}

/// The ACL the owner gave the object and the file.
enum ACLKind: String, CaseIterable, Sendable {
  /// Anyone reads, the owner reads and writes (what the board gives every post).
  case publicRead
  /// Only the owner reads and writes.
  case ownerOnly
  /// Members of `role:mods` and the owner read and write.
  case role
  /// No ACL given: the backend's default, anyone reads and writes.
  case none
}

enum Operation: String, CaseIterable, Sendable {
  case get
  case find
  case update
  case delete
  case fileInfo
  case getFile
  case deleteFile
}

enum Outcome: String, Sendable {
  case allowed
  /// `E403001 No access with ACL.`: the caller can read it but not change it.
  case refused
  /// Left out of `find` (and `count`) without an error.
  case hidden
  /// `E404001 No data available.`: the caller cannot read it, so for them it is not there.
  case missing
}

struct ACLCell: Sendable, CustomTestStringConvertible {
  let acl: ACLKind
  let caller: Caller
  let operation: Operation
  let expected: Outcome

  var testDescription: String {
    "\(acl.rawValue) ACL, \(caller.rawValue) \(operation.rawValue) → \(expected.rawValue)"
  }
}

private let ok = Outcome.allowed
private let no = Outcome.refused
private let hid = Outcome.hidden
private let gone = Outcome.missing

/// The expected outcome of every operation, written out by hand for every ACL and caller.
/// Columns: get, find, update, delete, fileInfo, getFile, deleteFile.
private let table: [(ACLKind, Caller, [Outcome])] = [
  (.publicRead, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.publicRead, .other, [ok, ok, no, no, ok, ok, no]),
  (.publicRead, .member, [ok, ok, no, no, ok, ok, no]),
  (.publicRead, .anonymous, [ok, ok, no, no, ok, ok, no]),

  (.ownerOnly, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.ownerOnly, .other, [gone, hid, gone, gone, gone, gone, gone]),
  (.ownerOnly, .member, [gone, hid, gone, gone, gone, gone, gone]),
  (.ownerOnly, .anonymous, [gone, hid, gone, gone, gone, gone, gone]),

  (.role, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.role, .other, [gone, hid, gone, gone, gone, gone, gone]),
  (.role, .member, [ok, ok, ok, ok, ok, ok, ok]),
  (.role, .anonymous, [gone, hid, gone, gone, gone, gone, gone]),

  (.none, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.none, .other, [ok, ok, ok, ok, ok, ok, ok]),
  (.none, .member, [ok, ok, ok, ok, ok, ok, ok]),
  (.none, .anonymous, [ok, ok, ok, ok, ok, ok, ok]),
]

let aclCells: [ACLCell] = table.flatMap { acl, caller, outcomes in
  zip(Operation.allCases, outcomes).map {
    ACLCell(acl: acl, caller: caller, operation: $0, expected: $1)
  }
}

/// A database with three signed-in users (one of them in `role:mods`), each on their own
/// connection, and one object and one file created by the owner with the ACL under test.
struct ACLFixture {
  static let className = "Note"
  static let fileName = "note.bin"
  static let fileBytes: [UInt8] = [0, 1, 2, 254, 255]

  let database: TestDatabase
  let stores: [Caller: Datastore]
  let logins: [Caller: Login]
  let object: DataObject

  init(_ engine: any EngineFixture, acl kind: ACLKind) throws {
    database = try engine.makeDatabase()
    var stores: [Caller: Datastore] = [:]
    var logins: [Caller: Login] = [:]
    for caller in Caller.allCases {
      let store = try Datastore.open(try database.location(as: caller.rawValue))
      stores[caller] = store
      if caller != .anonymous {
        logins[caller] = try store.loginAnonymously(secret: Datastore.newSecret())
      }
    }
    let ownerId = logins[.owner]!.user.objectId
    try Datastore.open(database.ownerLocation).addMember(
      logins[.member]!.user.objectId, toRole: "mods")
    let acl: ACL?
    switch kind {
    case .publicRead: acl = .publicRead(owner: ownerId)
    case .ownerOnly: acl = ACL(readers: [ownerId], writers: [ownerId])
    case .role: acl = ACL(readers: ["role:mods", ownerId], writers: ["role:mods", ownerId])
    case .none: acl = nil
    }
    self.stores = stores
    self.logins = logins
    let author = stores[.owner]!.client(logins[.owner]!)
    object = try author.create(
      ACLFixture.className, fields: ["text": .string("hello"), "n": .int(1)], acl: acl)
    try author.putFile(
      name: ACLFixture.fileName, bytes: ACLFixture.fileBytes, mimeType: "application/octet-stream",
      acl: acl)
  }

  /// The caller's client, with its principals read afresh from its session.
  func client(_ caller: Caller) throws -> DatastoreClient {
    try stores[caller]!.client(sessionToken: logins[caller]?.sessionToken)
  }

  /// The store as its owner sees it, past every ACL.
  func inspector() throws -> DatastoreClient {
    try Datastore.open(database.ownerLocation).master
  }
}

@Suite("ACL matrix")
struct ACLMatrixTests {
  @Test("the table covers every ACL, caller and operation once")
  func tableIsComplete() {
    #expect(aclCells.count == ACLKind.allCases.count * Caller.allCases.count * 7)
    let keys = Set(aclCells.map { "\($0.acl)/\($0.caller)/\($0.operation)" })
    #expect(keys.count == aclCells.count)
  }

  @Test(arguments: aclCells, EngineFixtures.withRemote)
  func cell(_ cell: ACLCell, _ engine: any EngineFixture) throws {
    let fixture = try ACLFixture(engine, acl: cell.acl)
    let master = try fixture.inspector()
    let client = try fixture.client(cell.caller)
    let object = fixture.object
    let query = Query(className: ACLFixture.className, order: ["-createDate"])
    let before = try fixture.database.fingerprint()
    let refusal: ErrorCode = cell.expected == .missing ? .notFound : .noAccess

    switch (cell.operation, cell.expected) {
    case (.get, .allowed):
      #expect(try client.get(ACLFixture.className, objectId: object.objectId) == object)
    case (.get, _):
      expectError(refusal) { try client.get(ACLFixture.className, objectId: object.objectId) }

    case (.find, .allowed):
      #expect(try client.find(query).map(\.objectId) == [object.objectId])
      #expect(try client.count(query) == 1)
    case (.find, _):
      #expect(try client.find(query).isEmpty)
      #expect(try client.count(query) == 0)
      #expect(try master.find(query).map(\.objectId) == [object.objectId])

    case (.update, .allowed):
      let updated = try client.update(
        ACLFixture.className, objectId: object.objectId, set: ["text": .string("changed")],
        increment: ["n": 2])
      let stored = try master.get(ACLFixture.className, objectId: object.objectId)
      #expect(stored == updated)
      #expect(stored["text"] == .string("changed"))
      #expect(stored["n"] == .int(3))
      #expect(stored.updateDate >= object.updateDate)
      #expect(stored.createDate == object.createDate)
      #expect(stored.acl == object.acl)
    case (.update, _):
      expectError(refusal) {
        try client.update(
          ACLFixture.className, objectId: object.objectId, set: ["text": .string("changed")],
          increment: ["n": 2])
      }

    case (.delete, .allowed):
      try client.delete(ACLFixture.className, objectId: object.objectId)
      expectError(.notFound) { try master.get(ACLFixture.className, objectId: object.objectId) }
      #expect(try master.count(query) == 0)
      #expect(try master.getFile(name: ACLFixture.fileName) == ACLFixture.fileBytes)
    case (.delete, _):
      expectError(refusal) { try client.delete(ACLFixture.className, objectId: object.objectId) }

    case (.fileInfo, .allowed):
      let info = try client.fileInfo(name: ACLFixture.fileName)
      #expect(info.fileName == ACLFixture.fileName)
      #expect(info.fileSize == ACLFixture.fileBytes.count)
      #expect(info.mimeType == "application/octet-stream")
      #expect(info.acl == object.acl)
    case (.fileInfo, _):
      expectError(refusal) { try client.fileInfo(name: ACLFixture.fileName) }

    case (.getFile, .allowed):
      #expect(try client.getFile(name: ACLFixture.fileName) == ACLFixture.fileBytes)
    case (.getFile, _):
      expectError(refusal) { try client.getFile(name: ACLFixture.fileName) }

    case (.deleteFile, .allowed):
      try client.deleteFile(name: ACLFixture.fileName)
      expectError(.notFound) { try master.fileInfo(name: ACLFixture.fileName) }
      expectError(.notFound) { try master.getFile(name: ACLFixture.fileName) }
      #expect(try master.get(ACLFixture.className, objectId: object.objectId) == object)
    case (.deleteFile, _):
      expectError(refusal) { try client.deleteFile(name: ACLFixture.fileName) }
    }

    let changesStore =
      cell.expected == .allowed && [.update, .delete, .deleteFile].contains(cell.operation)
    if !changesStore {
      // Reads and refusals leave every row as it was: same fields and updateDate, same bytes.
      #expect(try fixture.database.fingerprint() == before)
      #expect(try master.get(ACLFixture.className, objectId: object.objectId) == object)
      #expect(try master.getFile(name: ACLFixture.fileName) == ACLFixture.fileBytes)
      #expect(try master.count(query) == 1)
    }
  }

  @Test(arguments: Caller.allCases, EngineFixtures.withRemote)
  func missingObjectsAndFilesAreNotFound(_ caller: Caller, _ engine: any EngineFixture) throws {
    let fixture = try ACLFixture(engine, acl: .none)
    let client = try fixture.client(caller)
    let before = try fixture.database.fingerprint()
    let missing = "ABCDEFGHijklmnop"
    let name = ACLFixture.className
    expectError(.notFound) { try client.get(name, objectId: missing) }
    expectError(.notFound) { try client.update(name, objectId: missing, set: ["text": .null]) }
    expectError(.notFound) { try client.delete(name, objectId: missing) }
    // An existing objectId under another class is missing too.
    expectError(.notFound) { try client.get("Other", objectId: fixture.object.objectId) }
    expectError(.notFound) { try client.delete("Other", objectId: fixture.object.objectId) }
    expectError(.notFound) { try client.fileInfo(name: "missing.png") }
    expectError(.notFound) { try client.getFile(name: "missing.png") }
    expectError(.notFound) { try client.deleteFile(name: "missing.png") }
    #expect(try fixture.database.fingerprint() == before)
  }

  // Not on the remote engine: a server looks at the database's state at most every
  // `NCMBService.recheckMilliseconds` (10), so a role another process grants is seen by requests
  // after that, not by one made at once (`forum/session` refreshes its principals, the next
  // `forum/get` within 10 ms is still refused E404001).
  @Test("a role's members are seen from their next client on", arguments: EngineFixtures.all)
  func roleMembershipGrantsAccess(_ engine: any EngineFixture) throws {
    let fixture = try ACLFixture(engine, acl: .role)
    let outsider = try fixture.client(.other)
    expectError(.notFound) {
      try outsider.get(ACLFixture.className, objectId: fixture.object.objectId)
    }
    try fixture.inspector().store.addMember(
      fixture.logins[.other]!.user.objectId, toRole: "mods")
    let insider = try fixture.client(.other)
    #expect(insider.principals.names.contains("role:mods"))
    #expect(
      try insider.get(ACLFixture.className, objectId: fixture.object.objectId) == fixture.object)
  }
}
