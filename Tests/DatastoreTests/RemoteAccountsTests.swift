import Datastore
import EngineTestSupport
import Testing

/// Over https, password accounts and file searches go through NCMB's own calls (`POST users`,
/// `POST login`, `POST files/NAME`, `GET files?where=…`): the server hashes the password and
/// keeps it; a refusal arrives with its reason, as the server's engine gave it.
@Suite("remote engine: accounts and files through NCMB's calls")
struct RemoteAccountsTests {
  @Test func passwordAccountsAndFileSearches() throws {
    let database = try RemoteFixture(over: SQLiteFixture()).makeDatabase()
    defer { withExtendedLifetime(database) {} }
    let store = try Datastore.open(try database.location(as: "taro"))
    let made = try store.signUp(userName: "taro", password: "correct horse")
    #expect(made.user.userName == "taro")
    let again = try store.login(userName: "Taro", password: "correct horse")
    #expect(again.user.objectId == made.user.objectId)
    #expect(throws: DatastoreError(.authentication, reason: AccountReason.wrongPassword)) {
      try store.login(userName: "taro", password: "wrong horse")
    }
    #expect(throws: DatastoreError(.invalid, field: "userName", reason: StoreReason.alreadyExists))
    {
      try store.signUp(userName: "TARO", password: "another")
    }
    let client = try store.client(sessionToken: again.sessionToken)
    _ = try client.putFile(name: "notes.txt", bytes: Array("hello".utf8), mimeType: "text/plain")
    _ = try client.putFile(name: "other.txt", bytes: Array("hi".utf8), mimeType: "text/plain")
    let info = try client.fileInfo(name: "notes.txt")
    #expect(info.fileSize == 5 && info.mimeType == "text/plain")
    var query = Query(className: "file", order: ["fileName"], limit: 10)
    query.conditions = [.compare("fileSize", .greaterThan, .int(2))]
    #expect(try client.findFiles(query).map(\.fileName) == ["notes.txt"])
    query.conditions = []
    #expect(try client.countFiles(query) == 2)
    #expect(try client.findFiles(query).map(\.fileName) == ["notes.txt", "other.txt"])
    #expect(throws: DatastoreError.self) { try client.fileInfo(name: "missing.txt") }
  }
}
