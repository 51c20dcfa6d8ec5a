import EngineTestSupport
import Foundation
import Testing

@testable import Datastore

/// Counting a whole class (list's "page X/Y") must give exactly what a caller can find, whatever
/// ACLs the rows were created with, changed to, or deleted under.
@Suite("Counting a class")
struct ClassCountTests {
  @Test(
    "a class count equals the rows each caller can find, through creates, ACL changes and deletes",
    arguments: EngineFixtures.all)
  func countMatchesFind(_ engine: any EngineFixture) throws {
    let fixture = try ACLFixture(engine, acl: .publicRead)
    let owner = try fixture.client(.owner)
    let ownerId = fixture.logins[.owner]!.user.objectId
    let acls: [ACL?] = [
      .publicRead(owner: ownerId), ACL(readers: [ownerId], writers: [ownerId]),
      ACL(readers: ["role:mods", ownerId], writers: [ownerId]), nil,
      ACL(readers: ["role:mods", "*"], writers: [ownerId]),
    ]
    var created: [DataObject] = []
    for index in 0..<15 {
      created.append(
        try owner.create(
          ACLFixture.className, fields: ["n": .int(Int64(index))], acl: acls[index % acls.count]))
    }
    try expectCountsMatch(fixture)
    // Public rows made private and private rows made public.
    for object in created.prefix(6) {
      let isPublic = object.acl.readers.contains("*")
      _ = try owner.update(
        ACLFixture.className, objectId: object.objectId,
        acl: isPublic ? ACL(readers: [ownerId], writers: [ownerId]) : .publicRead(owner: ownerId))
    }
    try expectCountsMatch(fixture)
    for object in created.suffix(7) {
      try owner.delete(ACLFixture.className, objectId: object.objectId)
    }
    try expectCountsMatch(fixture)
  }

  private func expectCountsMatch(_ fixture: ACLFixture) throws {
    for caller in Caller.allCases {
      let client = try fixture.client(caller)
      let query = Query(className: ACLFixture.className, limit: Query.maximumLimit)
      #expect(try client.count(query) == client.find(query).count, "\(caller.rawValue)")
    }
  }
}
