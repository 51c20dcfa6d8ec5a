import Foundation
import Testing

@testable import Datastore

@Suite("Users, sessions and profiles")
struct UserSessionTests {
  /// The session tokens a profile file records, read straight from the file.
  private func savedTokens(_ profiles: ProfileStore, _ name: String) throws -> [String] {
    let bytes = try #require(contents(of: profiles.path(of: name)))
    let json = try JSONValue.parse(try decodeUTF8(bytes, field: "profile"))
    return (json.objectValue?["sessions"]?.objectValue ?? [:]).values.compactMap(\.stringValue)
  }

  private func isAlphanumeric(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { $0.isASCII && CharacterSet.alphanumerics.contains($0) }
  }

  @Test func firstSignInCreatesUserAndPrivateProfile() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let profiles = ProfileStore(directory: directory.file("config/forum/profiles"))
      #expect(try store.master.count(Query(className: User.className)) == 0)

      let (client, user) = try store.signIn(profile: "alice", in: profiles)
      #expect(user.objectId.count == 16)
      #expect(isAlphanumeric(user.objectId))
      #expect(user.userName.count == 10)
      #expect(isAlphanumeric(user.userName))
      #expect(user.displayName == user.userName)
      #expect(client.userId == user.objectId)
      #expect(try client.currentUser() == user)
      #expect(try store.master.count(Query(className: User.className)) == 1)
      // Anyone may read a user; only the user may change it.
      #expect(user.object.acl == ACL(readers: ["*"], writers: [user.objectId]))

      let path = profiles.path(of: "alice")
      #expect(path.hasPrefix(profiles.directory + "/"))
      #expect(mode(of: path) == 0o600)
      #expect(mode(of: profiles.directory) == 0o700)
      let tokens = try savedTokens(profiles, "alice")
      #expect(tokens.count == 1)
      #expect(try store.client(sessionToken: tokens[0]).userId == user.objectId)
      // No temporary files are left next to the profile.
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: profiles.directory) == ["alice.json"])

      // Signing in again reuses the live session: same user, same token.
      let again = try store.signIn(profile: "alice", in: profiles)
      #expect(again.user.objectId == user.objectId)
      #expect(try savedTokens(profiles, "alice") == tokens)
      #expect(try store.master.count(Query(className: User.className)) == 1)
    }
  }

  @Test func twoProfilesAreTwoUsers() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let profiles = ProfileStore(directory: directory.file("profiles"))
      let alice = try store.signIn(profile: "alice", in: profiles)
      let bob = try store.signIn(profile: "bob", in: profiles)
      #expect(alice.user.objectId != bob.user.objectId)
      #expect(alice.user.userName != bob.user.userName)
      #expect(try store.master.count(Query(className: User.className)) == 2)
      #expect(mode(of: profiles.path(of: "bob")) == 0o600)
      let secrets = try [profiles.loadOrCreate("alice"), profiles.loadOrCreate("bob")].map {
        $0.secrets[store.boardId]
      }
      #expect(secrets[0] != nil && secrets[1] != nil && secrets[0] != secrets[1])

      // Each acts as itself: bob cannot delete alice's post.
      let post = try alice.client.create(
        "Thread", fields: ["title": .string("hi")], acl: .publicRead(owner: alice.user.objectId))
      expectError(.noAccess) { try bob.client.delete("Thread", objectId: post.objectId) }
      try alice.client.delete("Thread", objectId: post.objectId)
    }
  }

  @Test func endedSessionSignsInAsTheSameUser() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let profiles = ProfileStore(directory: directory.file("profiles"))
      let first = try store.signIn(profile: "alice", in: profiles)
      let oldTokens = try savedTokens(profiles, "alice")
      let post = try first.client.create(
        "Thread", fields: ["title": .string("mine")], acl: .publicRead(owner: first.user.objectId))

      try store.endSessions(userId: first.user.objectId)
      expectError(.authentication) { try store.client(sessionToken: oldTokens[0]) }

      let second = try store.signIn(profile: "alice", in: profiles)
      #expect(second.user.objectId == first.user.objectId)
      #expect(second.user.userName == first.user.userName)
      let newTokens = try savedTokens(profiles, "alice")
      #expect(newTokens.count == 1)
      #expect(newTokens != oldTokens)
      #expect(try store.client(sessionToken: newTokens[0]).userId == first.user.objectId)
      #expect(try store.master.count(Query(className: User.className)) == 1)
      // Nobody loses the right to delete their own posts.
      try second.client.delete("Thread", objectId: post.objectId)
    }
  }

  @Test func expiredSessionSignsInAsTheSameUser() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("db.sqlite")
      let profiles = ProfileStore(directory: directory.file("profiles"))
      // Long enough for the first sign-in to use its session, short enough to wait out.
      let shortLived = try Datastore(path: path, sessionLifetime: 0.2)
      let first = try shortLived.signIn(profile: "alice", in: profiles)
      let oldTokens = try savedTokens(profiles, "alice")
      #expect(try shortLived.client(sessionToken: oldTokens[0]).userId == first.user.objectId)
      usleep(250_000)
      expectError(.authentication) { try shortLived.client(sessionToken: oldTokens[0]) }

      let store = try Datastore(path: path)
      let second = try store.signIn(profile: "alice", in: profiles)
      #expect(second.user.objectId == first.user.objectId)
      let newTokens = try savedTokens(profiles, "alice")
      #expect(newTokens.count == 1)
      #expect(newTokens != oldTokens)
      #expect(try store.client(sessionToken: newTokens[0]).userId == first.user.objectId)
      expectError(.authentication) { try store.client(sessionToken: oldTokens[0]) }
      #expect(try store.master.count(Query(className: User.className)) == 1)
    }
  }

  @Test func unknownTokenIsAnAuthenticationError() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let error = expectError(.authentication) {
        try store.client(sessionToken: Validation.randomId(length: 32))
      }
      #expect(error?.message == "Authentication error by header incorrect.")
      expectError(.authentication) { try store.client(sessionToken: nil).currentUser() }
    }
  }

  @Test func profileThatIsNotJSONIsRefusedAndKept() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let profiles = ProfileStore(directory: directory.file("profiles"))
      let path = profiles.path(of: "alice")
      try FileManager.default.createDirectory(
        atPath: profiles.directory, withIntermediateDirectories: true)
      let garbage = Array("{\"uuid\": oops, not json\n".utf8)
      #expect(FileManager.default.createFile(atPath: path, contents: Data(garbage)))
      chmod(path, 0o600)

      let error = expectError(.invalid) { try store.signIn(profile: "alice", in: profiles) }
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
      #expect(contents(of: path) == garbage)
      #expect(mode(of: path) == 0o600)
      #expect(try store.master.count(Query(className: User.className)) == 0)
    }
  }

  @Test func profileReadableByOthersIsRefusedAndKept() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let profiles = ProfileStore(directory: directory.file("profiles"))
      _ = try store.signIn(profile: "alice", in: profiles)
      let path = profiles.path(of: "alice")
      chmod(path, 0o644)
      let before = try #require(contents(of: path))

      let error = expectError(.invalid) { try store.signIn(profile: "alice", in: profiles) }
      #expect(error?.detail?.contains(path) == true, "\(String(describing: error))")
      #expect(error?.detail?.contains("chmod 600") == true)
      #expect(contents(of: path) == before)
      #expect(mode(of: path) == 0o644)
    }
  }

  @Test(arguments: ["", "a/b", "..", "a b", String(repeating: "x", count: 65)])
  func invalidProfileNamesAreRefused(_ name: String) throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let profiles = ProfileStore(directory: directory.file("profiles"))
      expectError(.invalid) { try store.signIn(profile: name, in: profiles) }
      #expect(!FileManager.default.fileExists(atPath: profiles.directory))
    }
  }

  @Test func sessionTokenNeverAppearsInUserJSON() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let login = try store.loginAnonymously(secret: Datastore.newSecret())
      let client = try store.client(sessionToken: login.sessionToken)
      let renamed = try client.setDisplayName("Alice")
      for user in [login.user, try client.currentUser(), renamed] {
        let text = user.json.jsonText()
        #expect(!text.contains(login.sessionToken))
        #expect(!text.lowercased().contains("token"))
        #expect(
          Set(user.json.objectValue?.keys ?? [:].keys)
            == ["objectId", "userName", "displayName", "createDate"])
        // The stored user object does not hold the token either.
        #expect(!user.object.json.jsonText().contains(login.sessionToken))
      }
      #expect(renamed.displayName == "Alice")
      // The rows of `objects` (the change feed names the user too, by id only).
      let rows = try fingerprint(store)
      let objects = rows.drop { $0 != "table objects" }.dropFirst().prefix {
        !$0.hasPrefix("table ")
      }
      let users = objects.filter { $0.contains("|user|") }
      #expect(users.count == 1)
      #expect(!users[0].contains(login.sessionToken))
    }
  }

  @Test func loginWithTheSameSecretIsTheSameUser() throws {
    try withTemporaryDirectory { directory in
      let store = try Datastore(path: directory.file("db.sqlite"))
      let secret = Datastore.newSecret()
      let first = try store.loginAnonymously(secret: secret)
      let second = try store.loginAnonymously(secret: secret)
      #expect(first.user.objectId == second.user.objectId)
      #expect(first.sessionToken != second.sessionToken)
      expectError(.invalid) { try store.loginAnonymously(secret: "short") }
      expectError(.invalid) { try store.loginAnonymously(secret: "not a secret at all, spaces") }
      #expect(try store.master.count(Query(className: User.className)) == 1)
    }
  }
}
