import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// What the ssh door keeps beside the board, in a directory the dedicated user owns (by default
/// `~/.forum-ssh` of that user): one directory per key (`keys/key-…/`, its member's profile,
/// drafts and history, so nothing of one key is ever read for another), the user it signed in as
/// (`keys/key-…/member`) and its recent posts (`keys/key-…/posts`, held to the board's budget).
/// Bans are the board's, not kept here.
struct SSHDoorState {
  let directory: String

  /// `~/.forum-ssh` of the user running the door, from the password database (never `$HOME`).
  static func defaultDirectory() -> String {
    if let entry = getpwuid(getuid()), let home = entry.pointee.pw_dir {
      return String(cString: home) + "/.forum-ssh"
    }
    return "/var/lib/forum-ssh"
  }

  func keyDirectory(_ key: SSHFingerprint) -> String { directory + "/keys/" + key.memberName }

  /// Makes the key's directory (and the state directory) private to the door's user.
  func prepare(_ key: SSHFingerprint) throws -> String {
    let path = keyDirectory(key)
    for part in [directory, directory + "/keys", path] {
      if mkdir(part, 0o700) != 0 && errno != EEXIST {
        throw CLIError.local(
          .cannotMake(path: SafeText.sanitize(part), error: String(cString: strerror(errno))))
      }
    }
    return path
  }

  // MARK: Members

  /// Records which user the key signed in as, so a moderator can ban the key's member by the
  /// key (the ban itself is the board's: `Board.setBanned`).
  func recordMember(_ key: SSHFingerprint, userId: String) {
    let path = keyDirectory(key) + "/member"
    if (try? String(contentsOfFile: path, encoding: .utf8)) == userId { return }
    try? writeAtomically(path, userId)
  }

  /// The user the key signed in as, if it ever came in.
  func member(of key: SSHFingerprint) -> String? {
    guard let text = try? String(contentsOfFile: keyDirectory(key) + "/member", encoding: .utf8),
      text.count == 16, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
    else { return nil }
    return text
  }

  /// True once the key's member chose a display name (asked on the first visit until then).
  func isNamed(_ key: SSHFingerprint) -> Bool {
    FileManager.default.fileExists(atPath: keyDirectory(key) + "/named")
  }

  func markNamed(_ key: SSHFingerprint) { try? writeAtomically(keyDirectory(key) + "/named", "") }

  // MARK: Budget

  /// Counts a post against the key's budget of `perMinute` posts in any 60 seconds; throws the
  /// one line to say when the budget is spent (nothing is posted then).
  func spend(_ key: SSHFingerprint, perMinute: Int, now: Double, messages: Messages) throws {
    guard perMinute > 0 else { return }
    let path = keyDirectory(key) + "/posts"
    try withLock {
      let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
      var times = text.split(separator: "\n").compactMap { Double($0) }.filter {
        $0 > now - 60 && $0 <= now + 1
      }
      if times.count >= perMinute {
        let wait = max(1, Int((times.min()! + 60 - now).rounded(.up)))
        throw DatastoreError(
          .noAccess, reason: DoorReason.postingBudgetSpent(perMinute: perMinute, wait: wait))
      }
      times.append(now)
      try writeAtomically(path, times.map { String($0) + "\n" }.joined())
    }
  }

  // MARK: Sessions

  /// How many sessions one key may hold at once: each is a forum process (about 18 MB), and a
  /// script holding forty took 700 MB of the host's memory.
  static let sessionsPerKey = 6

  /// Takes one of the key's `limit` session slots (a file of the key's folder, locked) for as
  /// long as this process lives: the lock goes with the process however it ends, a kill -9 or a
  /// dropped connection too. Throws the one line when every slot is held.
  func takeSessionSlot(_ key: SSHFingerprint, limit: Int) throws {
    guard limit > 0 else { return }
    for slot in 0..<limit {
      let descriptor = open(
        keyDirectory(key) + "/session-\(slot)", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
      guard descriptor >= 0 else { continue }
      // Held open on purpose: the slot is this process's until it ends.
      if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
      close(descriptor)
    }
    throw DatastoreError(.noAccess, reason: DoorReason.tooManySessions(limit: limit))
  }

  // MARK: New keys

  /// Counts a key the door has never seen against its address's budget of `perHour` new keys in
  /// any hour (a script making keys would otherwise make members without end); throws the one
  /// line when the budget is spent, before anything of the key is made. `address` is sshd's
  /// (`SSH_CONNECTION`), never the client's words.
  func admitNewKey(from address: String, perHour: Int, now: Double, messages: Messages) throws {
    guard perHour > 0 else { return }
    if mkdir(directory, 0o700) != 0 && errno != EEXIST {
      throw CLIError.local(
        .cannotMake(path: SafeText.sanitize(directory), error: String(cString: strerror(errno))))
    }
    let path = directory + "/new-keys"
    try withLock {
      let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
      // One line a new key: its address and when; only the last hour is kept.
      var entries = text.split(separator: "\n").compactMap { line -> (String, Double)? in
        let words = line.split(separator: " ")
        guard words.count == 2, let time = Double(words[1]) else { return nil }
        return (String(words[0]), time)
      }.filter { $0.1 > now - 3600 && $0.1 <= now + 1 }
      if entries.filter({ $0.0 == address }).count >= perHour {
        throw DatastoreError(.noAccess, reason: DoorReason.tooManyNewKeys)
      }
      entries.append((address, now))
      try writeAtomically(path, entries.map { "\($0.0) \($0.1)\n" }.joined())
    }
  }

  /// The connecting address from sshd's `SSH_CONNECTION` (its first word), when it is one;
  /// `local` when the door runs without sshd.
  static func address(fromConnection connection: String?) -> String {
    guard let word = connection?.split(separator: " ").first else { return "local" }
    let plain =
      word.utf8.count <= 45
      && word.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == ":") }
    return plain ? String(word) : "unknown"
  }

  // MARK: Files

  /// Runs `body` holding an exclusive lock on the state directory.
  private func withLock<T>(_ body: () throws -> T) throws -> T {
    let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw CLIError.local(
        .cannotOpen(path: SafeText.sanitize(directory), error: String(cString: strerror(errno))))
    }
    defer { close(descriptor) }
    while flock(descriptor, LOCK_EX) != 0 {
      guard errno == EINTR else { throw CLIError.local(.cannotLockDoorState) }
    }
    return try body()
  }

  private func writeAtomically(_ path: String, _ text: String) throws {
    let temporary = path + ".\(getpid()).tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
      throw CLIError.local(
        .cannotWrite(path: SafeText.sanitize(path), error: String(cString: strerror(errno))))
    }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    guard written == bytes.count, rename(temporary, path) == 0 else {
      unlink(temporary)
      throw CLIError.local(
        .cannotWrite(path: SafeText.sanitize(path), error: String(cString: strerror(errno))))
    }
  }
}
