#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A person's anonymous identity on this machine: one random secret per board (by the board's id,
/// so that one board, leaked or hostile, gives nothing on another) and the session token for each
/// board. Kept in a file only its owner can read. Boards store only hashes of both.
public struct Profile: Equatable, Sendable {
  public let name: String
  /// The secret per board id.
  public var secrets: [String: String]
  /// Session token per board id.
  public var sessions: [String: String]
  /// The UUID a profile of the previous version used on every board. Offered once to a board the
  /// profile has no secret for, to find the user it made there before; that board then knows the
  /// user by its own new secret instead.
  public let legacyId: String?
  /// What the profile keeps of each https board by its URL (`Datastore.location`): the board's
  /// id and the keys its server gives forum clients, so that a command does not ask for them
  /// again (`GET forum/keys`) until the server says they are stale.
  public var remoteBoards: [String: RemoteBoardKeys] = [:]
  /// What an https board's server last answered for the session kept here (`SessionWire`), by
  /// board id: a command resumes with it and asks no separate session check; its first request
  /// carries the answer's tag for the server to compare.
  public var sessionAnswers: [String: KeptSessionAnswer] = [:]

  public static let defaultName = "default"

  static func isValidName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 64
      && name.utf8.allSatisfy {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
          || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
          || $0 == UInt8(ascii: "_")
      }
  }
}

extension Profile {
  /// The keys kept for the https board at `location` (as given to `--db`), if any.
  public func remoteKeys(for location: String) -> RemoteBoardKeys? {
    guard EngineKind(location: location) == .remote, let (origin, _) = RemoteEngine.parse(location)
    else { return nil }
    return remoteBoards[origin + "/"]
  }
}

/// An https board's id and the keys its server gives every forum client (they identify an
/// application, not a person: the session authorizes).
public struct RemoteBoardKeys: Equatable, Sendable {
  public let boardId: String
  public let applicationKey: String
  public let clientKey: String

  var json: JSONValue {
    .object([
      "boardId": .string(boardId), "applicationKey": .string(applicationKey),
      "clientKey": .string(clientKey),
    ])
  }

  init?(json: JSONValue) {
    guard let fields = json.objectValue, let boardId = fields["boardId"]?.stringValue,
      let applicationKey = fields["applicationKey"]?.stringValue,
      let clientKey = fields["clientKey"]?.stringValue
    else { return nil }
    self.init(boardId: boardId, applicationKey: applicationKey, clientKey: clientKey)
  }

  init(boardId: String, applicationKey: String, clientKey: String) {
    self.boardId = boardId
    self.applicationKey = applicationKey
    self.clientKey = clientKey
  }
}

/// A session's answer (`GET forum/session`, with its tag) as a profile keeps it, beside the
/// session it was given for.
public struct KeptSessionAnswer: Equatable, Sendable {
  public let token: String
  public let answer: JSONValue

  /// The largest answer kept: a user object bigger than this is asked for at each command.
  static let maximumBytes = 32 << 10

  var tag: String? {
    guard case .string(let tag)? = answer.objectValue?["tag"], SessionWire.isTag(tag) else {
      return nil
    }
    return tag
  }

  var json: JSONValue { .object(["token": .string(token), "answer": answer]) }

  init?(json: JSONValue) {
    guard let fields = json.objectValue, let token = fields["token"]?.stringValue,
      let answer = fields["answer"]
    else { return nil }
    self.init(token: token, answer: answer)
  }

  init?(token: String, answer: JSONValue) {
    self.token = token
    self.answer = answer
    guard tag != nil, answer.jsonBytes().count <= KeptSessionAnswer.maximumBytes else {
      return nil
    }
  }
}

/// Profile files under one directory (`$XDG_CONFIG_HOME/forum/profiles`), one per name.
public struct ProfileStore: Sendable {
  public let directory: String

  public init(directory: String) { self.directory = directory }

  /// `$XDG_CONFIG_HOME/forum/profiles`, or `~/.config/forum/profiles`.
  public static func defaultDirectory(environment: [String: String]) -> String {
    let base =
      environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? ((environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.config")
    return base + "/forum/profiles"
  }

  public func path(of name: String) -> String { directory + "/" + name + ".json" }

  /// The profile called `name`, created empty the first time. A file that is not
  /// valid JSON, that others can read, or that belongs to someone else is refused, never used or
  /// overwritten.
  public func loadOrCreate(_ name: String) throws -> Profile {
    guard Profile.isValidName(name) else {
      throw DatastoreError.invalid(
        "profile", "a profile name uses letters, digits, - and _ (at most 64)")
    }
    if let profile = try load(name) { return profile }
    let profile = Profile(name: name, secrets: [:], sessions: [:], legacyId: nil)
    if try write(profile, replacing: false) { return profile }
    // Another process created it first: use theirs, so both act as the same user.
    guard let existing = try load(name) else { throw profileError(name, "could not be created") }
    return existing
  }

  /// Writes the profile file.
  public func save(_ profile: Profile) throws {
    _ = try write(profile, replacing: true)
  }

  func load(_ name: String) throws -> Profile? {
    let path = path(of: name)
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    if descriptor < 0 {
      if errno == ENOENT { return nil }
      throw profileError(name, "cannot be read: \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      throw profileError(name, "is not a regular file")
    }
    guard info.st_uid == getuid() else { throw profileError(name, "belongs to another user") }
    guard info.st_mode & 0o077 == 0 else {
      throw profileError(
        name,
        "is readable by others (mode \(String(info.st_mode & 0o777, radix: 8))); "
          + "run: chmod 600 \(path)")
    }
    guard info.st_size <= 1_000_000 else { throw profileError(name, "is too large") }
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 16_384)
    while case let count = read(descriptor, &chunk, chunk.count), count > 0 {
      data.append(contentsOf: chunk.prefix(count))
    }
    guard let text = String(validating: data, as: UTF8.self),
      let json = try? JSONValue.parse(text), let fields = json.objectValue
    else {
      throw profileError(name, "is not a valid profile (a JSON object); fix or remove \(path)")
    }
    var legacyId: String?
    if let uuid = fields["uuid"] {
      guard let text = uuid.stringValue, UUID(uuidString: text) != nil else {
        throw profileError(name, "has a uuid that is not a UUID; fix or remove \(path)")
      }
      legacyId = text
    }
    func strings(_ key: String) -> [String: String] {
      (fields[key]?.objectValue ?? [:]).compactMapValues(\.stringValue)
    }
    var profile = Profile(
      name: name, secrets: strings("secrets"), sessions: strings("sessions"), legacyId: legacyId)
    profile.remoteBoards = (fields["remoteBoards"]?.objectValue ?? [:]).compactMapValues(
      RemoteBoardKeys.init(json:))
    profile.sessionAnswers = (fields["sessionAnswers"]?.objectValue ?? [:]).compactMapValues(
      KeptSessionAnswer.init(json:))
    return profile
  }

  /// Writes through a private temporary file and an atomic link or rename, so a reader never
  /// sees half a profile. Without `replacing`, returns false when the file already exists.
  private func write(_ profile: Profile, replacing: Bool) throws -> Bool {
    try makeDirectory()
    var fields: [String: JSONValue] = [
      "secrets": .object(profile.secrets.mapValues { .string($0) }),
      "sessions": .object(profile.sessions.mapValues { .string($0) }),
    ]
    if let legacyId = profile.legacyId { fields["uuid"] = .string(legacyId) }
    if !profile.remoteBoards.isEmpty {
      fields["remoteBoards"] = .object(profile.remoteBoards.mapValues(\.json))
    }
    if !profile.sessionAnswers.isEmpty {
      fields["sessionAnswers"] = .object(profile.sessionAnswers.mapValues(\.json))
    }
    let body = JSONValue.object(fields).jsonText()
    let final = path(of: profile.name)
    let temporary = "\(directory)/.\(profile.name).\(getpid()).\(Validation.randomId(length: 6))"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw profileError(profile.name, "cannot be written: \(String(cString: strerror(errno)))")
    }
    defer { unlink(temporary) }
    let bytes = Array(body.utf8)
    let written = bytes.withUnsafeBytes { writeAll(descriptor, $0) }
    let synced = fsync(descriptor) == 0
    close(descriptor)
    guard written == bytes.count, synced else {
      throw profileError(profile.name, "cannot be written: the disk may be full")
    }
    if replacing {
      guard rename(temporary, final) == 0 else {
        throw profileError(profile.name, "cannot be written: \(String(cString: strerror(errno)))")
      }
      return true
    }
    if link(temporary, final) == 0 { return true }
    if errno == EEXIST { return false }
    throw profileError(profile.name, "cannot be written: \(String(cString: strerror(errno)))")
  }

  /// Runs `body` holding an exclusive lock on the profiles directory, so two processes signing in
  /// with one profile at once agree on one secret per board (and so on one user).
  func withLock<T>(_ name: String, _ body: () throws -> T) throws -> T {
    try makeDirectory()
    let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw profileError(name, "cannot be locked: \(String(cString: strerror(errno)))")
    }
    defer { close(descriptor) }
    while flock(descriptor, LOCK_EX) != 0 {
      guard errno == EINTR else {
        throw profileError(name, "cannot be locked: \(String(cString: strerror(errno)))")
      }
    }
    return try body()
  }

  private func makeDirectory() throws {
    var current = ""
    for part in directory.split(separator: "/") {
      current += "/" + part
      if mkdir(current, 0o700) != 0 && errno != EEXIST {
        throw DatastoreError(
          .systemError,
          reason: BoardAccessReason.cannotCreateDirectory(
            path: current, error: String(cString: strerror(errno))))
      }
    }
  }

  private func profileError(_ name: String, _ problem: String) -> DatastoreError {
    DatastoreError(.invalid, field: "profile", detail: "profile file \(path(of: name)) \(problem)")
  }
}

extension Datastore {
  /// Signs in as the profile's user on this board: reuses its session when still valid, otherwise
  /// logs in again with the profile's secret for this board (made and saved on first use, before
  /// the user exists) and saves the new session token.
  public func signIn(profile name: String, in profiles: ProfileStore) throws -> (
    client: DatastoreClient, user: User
  ) {
    var madeNew = false
    return try signIn(profile: name, in: profiles, madeNew: &madeNew)
  }

  /// `signIn`, telling whether it made the profile a new user on this board (the person may
  /// have mistyped the profile's name).
  public func signIn(profile name: String, in profiles: ProfileStore, madeNew: inout Bool) throws
    -> (client: DatastoreClient, user: User)
  {
    let known = try profiles.loadOrCreate(name)
    let remote = engine as? RemoteEngine
    if let remote { keepSessionAnswers(of: remote, profile: name, in: profiles, known: known) }
    if let signedIn = try resumeSession(of: known) {
      let answer = remote?.latestAnswer
      if let keys = remoteKeys,
        known.remoteBoards[location] != keys || known.sessionAnswers[boardId] != answer
      {
        try profiles.withLock(name) {
          var profile = try profiles.loadOrCreate(name)
          profile.remoteBoards[location] = keys
          profile.sessionAnswers[boardId] = answer
          try profiles.save(profile)
        }
      }
      keepWhatChanges(of: remote, profile: name, in: profiles)
      return signedIn
    }
    defer { keepWhatChanges(of: remote, profile: name, in: profiles) }
    return try profiles.withLock(name) {
      var profile = try profiles.loadOrCreate(name)
      // Another process may have signed in while this one waited for the lock (a session
      // other than the one just refused).
      if profile.sessions[boardId] != known.sessions[boardId],
        let signedIn = try resumeSession(of: profile)
      {
        return signedIn
      }
      if let keys = remoteKeys { profile.remoteBoards[location] = keys }
      var previous: String?
      let secret: String
      var secretIsNew = false
      if let known = profile.secrets[boardId] {
        secret = known
      } else {
        secretIsNew = true
        secret = Datastore.newSecret()
        previous = profile.legacyId
        profile.secrets[boardId] = secret
        try profiles.save(profile)
      }
      let login = try loginAnonymously(secret: secret, previousSecret: previous)
      // A secret made just now named nobody (unless the old version's id found its user).
      madeNew = secretIsNew && previous == nil
      profile.sessions[boardId] = login.sessionToken
      profile.sessionAnswers[boardId] = remote?.latestAnswer
      try profiles.save(profile)
      return (client(login), login.user)
    }
  }

  /// An https board: the profile's kept answer for its session is offered to the engine, which
  /// resumes with it (no request); when the session has ended, the engine signs in again here,
  /// once, with the profile's secret (the same member), and the new session is kept.
  private func keepSessionAnswers(
    of remote: RemoteEngine, profile name: String, in profiles: ProfileStore, known: Profile
  ) {
    let boardId = boardId
    let location = location
    remote.keptAnswer = known.sessionAnswers[boardId]
    remote.signInAgain = { [unowned self] in
      // Kept here, under the lock, not by the hooks (which take it).
      let hooks = (remote.keysChanged, remote.answerChanged)
      (remote.keysChanged, remote.answerChanged) = (nil, nil)
      defer { (remote.keysChanged, remote.answerChanged) = hooks }
      return try profiles.withLock(name) {
        var profile = try profiles.loadOrCreate(name)
        guard let secret = profile.secrets[boardId] else { throw DatastoreError(.authentication) }
        let login = try loginAnonymously(secret: secret)
        profile.sessions[boardId] = login.sessionToken
        profile.sessionAnswers[boardId] = remote.latestAnswer
        profile.remoteBoards[location] = remote.boardKeys
        try profiles.save(profile)
        return login
      }
    }
  }

  /// Once signed in: what the engine learns again during the command (the session's answer
  /// changed, the keys were rotated) is kept for the next.
  private func keepWhatChanges(
    of remote: RemoteEngine?, profile name: String, in profiles: ProfileStore
  ) {
    guard let remote else { return }
    let boardId = boardId
    let location = location
    func keep(_ change: @escaping (inout Profile) -> Void) throws {
      try profiles.withLock(name) {
        var profile = try profiles.loadOrCreate(name)
        change(&profile)
        try profiles.save(profile)
      }
    }
    remote.answerChanged = { answer in try keep { $0.sessionAnswers[boardId] = answer } }
    remote.keysChanged = { keys in try keep { $0.remoteBoards[location] = keys } }
  }

  private func resumeSession(of profile: Profile) throws -> (client: DatastoreClient, user: User)? {
    guard let token = profile.sessions[boardId], let client = try? client(sessionToken: token),
      let user = try? client.currentUser()
    else { return nil }
    return (client, user)
  }
}

/// write(2), which `ProfileStore.write` would shadow inside the type.
private func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
  write(descriptor, bytes.baseAddress, bytes.count)
}
