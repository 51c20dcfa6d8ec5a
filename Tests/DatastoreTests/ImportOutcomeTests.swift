import EngineTestSupport
import Testing

@testable import Datastore

/// `forum import`'s outcomes, item by item, on both SQL engines (written once, `SQLImport`): an
/// item already there exactly so is `unchanged`, one whose id, name or anonymous id is taken by
/// something else is a `conflict` and changes nothing, and a parent keeps the counters the
/// export gave it although its children come after it.
@Suite("forum import: each item's outcome on every engine")
struct ImportOutcomeTests {
  static let rules = EngineRules(children: [
    ChildRule(
      childClass: "Note", parentField: "topic", parentClass: "Topic", numberField: "number",
      lastNumberField: "lastNumber", countField: "noteCount", activityField: "lastActivity",
      fileField: nil)
  ])

  @Test(arguments: EngineFixtures.all)
  func eachItemIsImportedOnceAndATakenIdIsAConflict(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase(rules: Self.rules, indexes: [])
    let store = try Datastore.open(database.ownerLocation, rules: Self.rules)
    let user = "U000000000000001"
    let other = "U000000000000002"
    let everyone = ACL(readers: ["*"], writers: [user])
    let hidden = ACL(readers: [user], writers: [user])
    let topic = ImportedObject(
      className: "Topic", objectId: "T000000000000001", createDate: 1_600_000_000_000,
      updateDate: 1_600_000_001_000, acl: everyone,
      fields: [
        "title": .string("given"), "noteCount": .int(7), "lastNumber": .int(9),
        "lastActivity": .int(1_600_000_002_000),
      ])
    let note = ImportedObject(
      className: "Note", objectId: "N000000000000001", createDate: 1_600_000_003_000,
      updateDate: 1_600_000_003_000, acl: hidden,
      fields: [
        "topic": .pointer(className: "Topic", objectId: topic.objectId), "number": .int(9),
        "text": .string("é and \u{1F600}"),
      ])
    func person(_ id: String) -> ImportedObject {
      ImportedObject(
        className: User.className, objectId: id, createDate: 1_600_000_000_000,
        updateDate: 1_600_000_000_000, acl: ACL(readers: ["*"], writers: [id]),
        fields: ["userName": .string("user " + id)])
    }
    let secret = Datastore.newSecret()
    let picture = ImportedFile(
      name: "picture.png", mimeType: "image/png", bytes: [1, 2, 3], acl: everyone,
      createDate: 1_600_000_000_000, updateDate: 1_600_000_000_000)
    let privateFile = ImportedFile(
      name: "mine.txt", mimeType: "text/plain", bytes: [4], acl: hidden,
      createDate: 1_600_000_000_000, updateDate: 1_600_000_000_000)
    let items: [ImportItem] = [
      .object(person(user), anonymousId: secret), .object(person(other), anonymousId: nil),
      .object(topic, anonymousId: nil), .object(note, anonymousId: nil),
      .roleMember(role: "editors", userId: user), .file(picture), .file(privateFile),
      .counter(name: "imported", atLeast: 5),
    ]
    #expect(try store.importItems(items) == Array(repeating: .imported, count: items.count))
    let stored = try store.storedObjects([topic.objectId, note.objectId, "X000000000000001"])
    #expect(stored[topic.objectId] == topic, "the parent's counters as given, after its child")
    #expect(stored[note.objectId] == note)
    #expect(stored.count == 2)
    #expect(try store.counter("imported") == 5)

    // Again: all there exactly so.
    let before = try database.fingerprint()
    #expect(try store.importItems(items) == Array(repeating: .unchanged, count: items.count))
    #expect(try store.importItems([.counter(name: "imported", atLeast: 3)]) == [.unchanged])
    #expect(try database.fingerprint() == before)

    // Taken by something else: a conflict, nothing written.
    func changed(_ object: ImportedObject, _ fields: [String: JSONValue]? = nil, acl: ACL? = nil)
      -> ImportedObject
    {
      ImportedObject(
        className: object.className, objectId: object.objectId, createDate: object.createDate,
        updateDate: object.updateDate, acl: acl ?? object.acl, fields: fields ?? object.fields)
    }
    var otherTopicFields = topic.fields
    otherTopicFields["noteCount"] = .int(8)
    let conflicts: [ImportItem] = [
      .object(changed(topic, otherTopicFields), anonymousId: nil),
      .object(changed(note, acl: everyone), anonymousId: nil),
      // Another user with the first one's anonymous id; the first one without it is unchanged.
      .object(person("U000000000000003"), anonymousId: secret),
      // The second user as given, but now with an anonymous id it never had.
      .object(person(other), anonymousId: Datastore.newSecret()),
      .file(
        ImportedFile(
          name: picture.name, mimeType: picture.mimeType, bytes: [1, 2, 4], acl: picture.acl,
          createDate: picture.createDate, updateDate: picture.updateDate)),
      .file(
        ImportedFile(
          name: privateFile.name, mimeType: privateFile.mimeType, bytes: privateFile.bytes,
          acl: everyone, createDate: privateFile.createDate, updateDate: privateFile.updateDate)),
    ]
    #expect(
      try store.importItems(conflicts) == Array(repeating: .conflict, count: conflicts.count))
    #expect(try database.fingerprint() == before)
    #expect(
      try store.importItems([.object(person(user), anonymousId: nil)]) == [.unchanged])

    // The imported user signs in with its anonymous id, as an app does (through the server).
    let server = try Datastore.open(try database.serverLocation(), rules: Self.rules)
    let login = try server.loginAnonymously(secret: secret)
    #expect(login.user.objectId == user)
  }
}

extension ImportOutcomeTests {
  /// A later batch that brings a parent more children (a second import of a thread an earlier
  /// one brought) counts it up as posting them would: count, last number and last activity
  /// (only ever forward); a child posted after follows them. PostgreSQL's import ran no
  /// trigger, so the thread kept its old counts and the next comment took an imported number.
  @Test(arguments: EngineFixtures.all)
  func childrenOfAParentAlreadyThereCountItUp(_ engine: any EngineFixture) throws {
    let database = try engine.makeDatabase(rules: Self.rules, indexes: [])
    let store = try Datastore.open(database.ownerLocation, rules: Self.rules)
    let everyone = ACL(readers: ["*"], writers: ["*"])
    let topic = ImportedObject(
      className: "Topic", objectId: "T000000000000001", createDate: 1_000,
      updateDate: 1_000, acl: everyone,
      fields: ["noteCount": .int(1), "lastNumber": .int(1), "lastActivity": .int(5_000)])
    func note(_ number: Int64, date: Int64) -> ImportItem {
      .object(
        ImportedObject(
          className: "Note", objectId: "N00000000000000\(number)", createDate: date,
          updateDate: date, acl: everyone,
          fields: [
            "topic": .pointer(className: "Topic", objectId: topic.objectId),
            "number": .int(number),
          ]), anonymousId: nil)
    }
    _ = try store.importItems([.object(topic, anonymousId: nil), note(1, date: 5_000)])
    let before = try store.storedObjects([topic.objectId])[topic.objectId]
    #expect(before?.fields["noteCount"] == .int(1))
    // Two more, the newer first in the file, one older than the topic's last activity.
    #expect(
      try store.importItems([note(3, date: 9_000), note(2, date: 2_000)]) == [
        .imported, .imported,
      ])
    let after = try store.storedObjects([topic.objectId])[topic.objectId]
    #expect(after?.fields["noteCount"] == .int(3), "\(String(describing: after))")
    #expect(after?.fields["lastNumber"] == .int(3))
    #expect(after?.fields["lastActivity"] == .int(9_000))
    #expect(after?.updateDate == 1_000, "counting up is not an edit")
    let posted = try store.master.create(
      "Note", fields: ["topic": .pointer(className: "Topic", objectId: topic.objectId)],
      acl: everyone)
    #expect(posted["number"]?.intValue == 4, "\(posted)")
  }
}
