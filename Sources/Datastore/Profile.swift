#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A person's anonymous identity on this machine: the UUID the backend knows them by and the
/// session token for each database they use. Kept in a file only its owner can read.
public struct Profile: Equatable, Sendable {
  public let name: String
  public let uuid: String
  /// Session token per database (by the database's absolute path).
  public var sessions: [String: String]

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

  /// The profile called `name`, created with a fresh UUID the first time. A file that is not
  /// valid JSON, that others can read, or that belongs to someone else is refused, never used or
  /// overwritten.
  public func loadOrCreate(_ name: String) throws -> Profile {
    guard Profile.isValidName(name) else {
      throw DatastoreError.invalid(
        "profile", "a profile name uses letters, digits, - and _ (at most 64)")
    }
    if let profile = try load(name) { return profile }
    let profile = Profile(name: name, uuid: UUID().uuidString.lowercased(), sessions: [:])
    if try write(profile, replacing: false) { return profile }
    // Another process created it first: use theirs, so both act as the same user.
    guard let existing = try load(name) else { throw profileError(name, "could not be created") }
    return existing
  }

  /// Records the session token for `database` in the profile file.
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
    guard let json = try? JSONDecoder().decode(JSONValue.self, from: data),
      case .string(let uuid)? = json.objectValue?["uuid"], UUID(uuidString: uuid) != nil
    else {
      throw profileError(name, "is not a valid profile (JSON with a uuid); fix or remove \(path)")
    }
    var sessions: [String: String] = [:]
    if case .object(let entries)? = json.objectValue?["sessions"] {
      for (database, token) in entries { sessions[database] = token.stringValue }
    }
    return Profile(name: name, uuid: uuid, sessions: sessions)
  }

  /// Writes through a private temporary file and an atomic link or rename, so a reader never
  /// sees half a profile. Without `replacing`, returns false when the file already exists.
  private func write(_ profile: Profile, replacing: Bool) throws -> Bool {
    try makeDirectory()
    let body = JSONValue.object([
      "uuid": .string(profile.uuid),
      "sessions": .object(profile.sessions.mapValues { .string($0) }),
    ]).jsonText()
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

  private func makeDirectory() throws {
    var current = ""
    for part in directory.split(separator: "/") {
      current += "/" + part
      if mkdir(current, 0o700) != 0 && errno != EEXIST {
        throw DatastoreError(
          .systemError, detail: "cannot create \(current): \(String(cString: strerror(errno)))")
      }
    }
  }

  private func profileError(_ name: String, _ problem: String) -> DatastoreError {
    DatastoreError(.invalid, field: "profile", detail: "profile file \(path(of: name)) \(problem)")
  }
}

extension Datastore {
  /// Signs in as the profile's user: reuses its session for this database when still valid,
  /// otherwise logs in again with the profile's UUID (same user back) and saves the new token.
  public func signIn(profile name: String, in profiles: ProfileStore) throws -> (
    client: DatastoreClient, user: User
  ) {
    var profile = try profiles.loadOrCreate(name)
    let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    if let token = profile.sessions[key], let client = try? client(sessionToken: token),
      let user = try? client.currentUser()
    {
      return (client, user)
    }
    let login = try loginAnonymously(uuid: profile.uuid)
    profile.sessions[key] = login.sessionToken
    try profiles.save(profile)
    return (try client(sessionToken: login.sessionToken), login.user)
  }
}

/// write(2), which `ProfileStore.write` would shadow inside the type.
private func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
  write(descriptor, bytes.baseAddress, bytes.count)
}
