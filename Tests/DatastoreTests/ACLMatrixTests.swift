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
  /// `E403001 No access with ACL.`
  case refused
  /// Left out of `find` (and `count`) without an error.
  case hidden
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

/// The expected outcome of every operation, written out by hand for every ACL and caller.
/// Columns: get, find, update, delete, fileInfo, getFile, deleteFile.
private let table: [(ACLKind, Caller, [Outcome])] = [
  (.publicRead, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.publicRead, .other, [ok, ok, no, no, ok, ok, no]),
  (.publicRead, .member, [ok, ok, no, no, ok, ok, no]),
  (.publicRead, .anonymous, [ok, ok, no, no, ok, ok, no]),

  (.ownerOnly, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.ownerOnly, .other, [no, hid, no, no, no, no, no]),
  (.ownerOnly, .member, [no, hid, no, no, no, no, no]),
  (.ownerOnly, .anonymous, [no, hid, no, no, no, no, no]),

  (.role, .owner, [ok, ok, ok, ok, ok, ok, ok]),
  (.role, .other, [no, hid, no, no, no, no, no]),
  (.role, .member, [ok, ok, ok, ok, ok, ok, ok]),
  (.role, .anonymous, [no, hid, no, no, no, no, no]),

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

/// A database with three signed-in users (one of them in `role:mods`), and one object and one
/// file created by the owner with the ACL under test.
struct ACLFixture {
  static let className = "Note"
  static let fileName = "note.bin"
  static let fileBytes: [UInt8] = [0, 1, 2, 254, 255]

  let store: Datastore
  let owner: Login
  let other: Login
  let member: Login
  let object: DataObject

  init(path: String, acl kind: ACLKind) throws {
    store = try Datastore(path: path)
    owner = try store.loginAnonymously(uuid: UUID().uuidString)
    other = try store.loginAnonymously(uuid: UUID().uuidString)
    member = try store.loginAnonymously(uuid: UUID().uuidString)
    try store.addMember(member.user.objectId, toRole: "mods")
    let ownerId = owner.user.objectId
    let acl: ACL?
    switch kind {
    case .publicRead: acl = .publicRead(owner: ownerId)
    case .ownerOnly: acl = ACL(readers: [ownerId], writers: [ownerId])
    case .role: acl = ACL(readers: ["role:mods", ownerId], writers: ["role:mods", ownerId])
    case .none: acl = nil
    }
    let author = try store.client(sessionToken: owner.sessionToken)
    object = try author.create(
      ACLFixture.className, fields: ["text": .string("hello"), "n": .int(1)], acl: acl)
    try author.putFile(
      name: ACLFixture.fileName, bytes: ACLFixture.fileBytes, mimeType: "application/octet-stream",
      acl: acl)
  }

  func client(_ caller: Caller) throws -> DatastoreClient {
    switch caller {
    case .owner: return try store.client(sessionToken: owner.sessionToken)
    case .other: return try store.client(sessionToken: other.sessionToken)
    case .member: return try store.client(sessionToken: member.sessionToken)
    case .anonymous: return try store.client(sessionToken: nil)
    }
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

  @Test(arguments: aclCells)
  func cell(_ cell: ACLCell) throws {
    try withTemporaryDirectory { directory in
      let fixture = try ACLFixture(path: directory.file("db.sqlite"), acl: cell.acl)
      let store = fixture.store
      let master = store.master
      let client = try fixture.client(cell.caller)
      let object = fixture.object
      let query = Query(className: ACLFixture.className, order: ["-createDate"])
      let before = try fingerprint(store)

      switch (cell.operation, cell.expected) {
      case (.get, .allowed):
        #expect(try client.get(ACLFixture.className, objectId: object.objectId) == object)
      case (.get, _):
        expectError(.noAccess) { try client.get(ACLFixture.className, objectId: object.objectId) }

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
        expectError(.noAccess) {
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
        expectError(.noAccess) {
          try client.delete(ACLFixture.className, objectId: object.objectId)
        }

      case (.fileInfo, .allowed):
        let info = try client.fileInfo(name: ACLFixture.fileName)
        #expect(info.fileName == ACLFixture.fileName)
        #expect(info.fileSize == ACLFixture.fileBytes.count)
        #expect(info.mimeType == "application/octet-stream")
        #expect(info.acl == object.acl)
      case (.fileInfo, _):
        expectError(.noAccess) { try client.fileInfo(name: ACLFixture.fileName) }

      case (.getFile, .allowed):
        #expect(try client.getFile(name: ACLFixture.fileName) == ACLFixture.fileBytes)
      case (.getFile, _):
        expectError(.noAccess) { try client.getFile(name: ACLFixture.fileName) }

      case (.deleteFile, .allowed):
        try client.deleteFile(name: ACLFixture.fileName)
        expectError(.notFound) { try master.fileInfo(name: ACLFixture.fileName) }
        expectError(.notFound) { try master.getFile(name: ACLFixture.fileName) }
        #expect(try rowCount(store, "files") == 0)
        #expect(try master.get(ACLFixture.className, objectId: object.objectId) == object)
      case (.deleteFile, _):
        expectError(.noAccess) { try client.deleteFile(name: ACLFixture.fileName) }
      }

      let changesStore =
        cell.expected == .allowed && [.update, .delete, .deleteFile].contains(cell.operation)
      if !changesStore {
        // Reads and refusals leave every row as it was: same fields and updateDate, same bytes.
        #expect(try fingerprint(store) == before)
        #expect(try master.get(ACLFixture.className, objectId: object.objectId) == object)
        #expect(try master.getFile(name: ACLFixture.fileName) == ACLFixture.fileBytes)
        #expect(try master.count(query) == 1)
      }
    }
  }

  @Test(arguments: Caller.allCases)
  func missingObjectsAndFilesAreNotFound(_ caller: Caller) throws {
    try withTemporaryDirectory { directory in
      let fixture = try ACLFixture(path: directory.file("db.sqlite"), acl: .none)
      let client = try fixture.client(caller)
      let before = try fingerprint(fixture.store)
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
      #expect(try fingerprint(fixture.store) == before)
    }
  }

  @Test("a role's members are seen from their next client on")
  func roleMembershipGrantsAccess() throws {
    try withTemporaryDirectory { directory in
      let fixture = try ACLFixture(path: directory.file("db.sqlite"), acl: .role)
      let outsider = try fixture.client(.other)
      expectError(.noAccess) {
        try outsider.get(ACLFixture.className, objectId: fixture.object.objectId)
      }
      try fixture.store.addMember(fixture.other.user.objectId, toRole: "mods")
      let insider = try fixture.client(.other)
      #expect(insider.principals.names.contains("role:mods"))
      #expect(
        try insider.get(ACLFixture.className, objectId: fixture.object.objectId)
          == fixture.object)
    }
  }

  @Test("deleteAll is for the master key only and deletes just what matches")
  func deleteAllIsMasterOnly() throws {
    try withTemporaryDirectory { directory in
      let fixture = try ACLFixture(path: directory.file("db.sqlite"), acl: .none)
      let master = fixture.store.master
      let thread = JSONValue.pointer(className: "Thread", objectId: "ABCDEFGHijklmnop")
      let otherThread = JSONValue.pointer(className: "Thread", objectId: "ABCDEFGHijklmnoq")
      for pointer in [thread, thread, otherThread] {
        try master.create("Comment", fields: ["thread": pointer])
      }
      let query = Query(className: "Comment", equalTo: ["thread": thread])
      let before = try fingerprint(fixture.store)
      for caller in Caller.allCases {
        expectError(.noAccess, "\(caller)") {
          try fixture.client(caller).deleteAll(matching: query)
        }
      }
      #expect(try fingerprint(fixture.store) == before)
      #expect(try master.deleteAll(matching: query) == 2)
      #expect(try master.count(Query(className: "Comment")) == 1)
      #expect(try master.count(Query(className: ACLFixture.className)) == 1)
    }
  }
}
