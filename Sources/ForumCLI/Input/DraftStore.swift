#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Where an unsent draft was meant to go. A draft is only ever offered for its own target, so
/// words typed for one person or thread never go to another by a press of Enter.
enum DraftTarget: Equatable {
  /// A comment on thread N.
  case comment(thread: Int)
  /// A reply to comment C of thread N.
  case reply(thread: Int, comment: Int)
  /// A private message to the person with this handle.
  case message(handle: String)
  /// A new thread (its title, then its description).
  case thread

  /// The file it is kept in; handles are letters and digits, so they are safe in a name.
  var fileName: String {
    switch self {
    case .comment(let thread): return "comment-\(thread).txt"
    case .reply(let thread, let comment): return "reply-\(thread)-\(comment).txt"
    case .message(let handle): return "message-\(handle).txt"
    case .thread: return "thread.txt"
    }
  }

  /// How the person names it: `#5`, `5/3`, `@ken`.
  func label(_ messages: Messages) -> String {
    switch self {
    case .comment(let thread): return "#\(thread)"
    case .reply(let thread, let comment): return "\(thread)/\(comment)"
    case .message(let handle): return "@" + handle
    case .thread: return messages.aNewThread
    }
  }
}

/// Unsent drafts on disk, one per target, under `$XDG_STATE_HOME/forum/drafts/BOARD/PROFILE/`
/// (BOARD is the board's id, which stays when its file is moved or renamed): written as each
/// line is typed, so a crash or a refused post loses nothing; removed when the post goes
/// through or the person discards it. A draft is only ever read back for the board, the profile
/// and the target it was written for, so one person's words never go out under another's name.
struct DraftStore {
  /// `$XDG_STATE_HOME/forum/drafts`: every board's and profile's drafts.
  let root: String
  /// This board's and profile's drafts.
  let directory: String

  init(root: String, boardId: String, profile: String) {
    self.root = root
    directory = root + "/" + DraftStore.component(boardId) + "/" + DraftStore.component(profile)
  }

  /// A name safe as one path component: board ids and profile names are letters, digits, `-`
  /// and `_` already; anything else is replaced, and an empty name is never the root itself.
  private static func component(_ name: String) -> String {
    let safe = String(
      name.unicodeScalars.map { scalar -> Character in
        let value = scalar.value
        let allowed =
          (48...57).contains(value) || (65...90).contains(value) || (97...122).contains(value)
          || value == 45 || value == 95
        return allowed ? Character(scalar) : "_"
      })
    return safe.isEmpty ? "_" : safe
  }

  func path(_ target: DraftTarget) -> String { directory + "/" + target.fileName }

  /// The saved text, if any.
  func load(_ target: DraftTarget) -> String? {
    guard let data = FileManager.default.contents(atPath: path(target)), !data.isEmpty
    else { return nil }
    return String(decoding: data, as: UTF8.self)
  }

  /// Where drafts an older forum kept, without their board and profile, are put aside.
  var unsortedDirectory: String { root + "/unsorted" }

  /// Drafts an older forum kept straight in `root` (`comment-5.txt`, `message-ken.txt`,
  /// `comment.txt`…) say for whom and on which board nothing: they are never offered. They are
  /// moved, unchanged, into `unsortedDirectory`; returns how many were, so that it is said once.
  func setAsideOlderDrafts() -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    let older = names.filter { $0.hasSuffix(".txt") }
    guard !older.isEmpty else { return 0 }
    try? FileManager.default.createDirectory(
      atPath: unsortedDirectory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    var moved = 0
    for name in older {
      var destination = unsortedDirectory + "/" + name
      var copy = 1
      while access(destination, F_OK) == 0 {
        copy += 1
        destination = unsortedDirectory + "/" + String(name.dropLast(4)) + "-\(copy).txt"
      }
      if rename(root + "/" + name, destination) == 0 { moved += 1 }
    }
    return moved
  }

  /// How many unsent drafts are kept at most, one a target, for every profile and board of the
  /// account together (they share `root`): a new one past it is not saved, and is printed if it
  /// is not posted, so the directory cannot grow without end.
  static let limit = 50

  /// Why a draft could not be written: the system's words (a full disk, a directory that is
  /// not one), or nil when `limit` drafts are kept already.
  struct SaveFailure: Error {
    let reason: String?
  }

  /// The drafts kept now, on every board for every profile (an older forum's set-aside ones
  /// included).
  func count() -> Int {
    let files = FileManager.default
    func texts(_ path: String) -> Int {
      ((try? files.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".txt") }.count
    }
    var total = texts(root)
    for board in (try? files.contentsOfDirectory(atPath: root)) ?? [] where board != "unsorted" {
      for profile in (try? files.contentsOfDirectory(atPath: root + "/" + board)) ?? [] {
        total += texts(root + "/" + board + "/" + profile)
      }
    }
    return total + texts(unsortedDirectory)
  }

  /// Replaces the saved text (private to the user: 0600 in a 0700 directory), or says why it
  /// could not: every byte is written and flushed before the old draft is replaced. A target
  /// without a draft gets one only while fewer than `limit` are kept.
  func save(_ text: String, for target: DraftTarget) throws {
    if access(path(target), F_OK) != 0 && count() >= DraftStore.limit {
      throw SaveFailure(reason: nil)
    }
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw SaveFailure(reason: Self.reason(errno == 0 ? ENOTDIR : errno))
    }
    let temporary = path(target) + ".new"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { throw SaveFailure(reason: Self.reason(errno)) }
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        let failure = errno
        close(descriptor)
        unlink(temporary)
        throw SaveFailure(reason: Self.reason(failure))
      }
      bytes = bytes.dropFirst(written)
    }
    // A full disk may only say so when the data is flushed.
    let flushed = fsync(descriptor) == 0 ? 0 : errno
    let closed = close(descriptor) == 0 ? 0 : errno
    if flushed != 0 || closed != 0 {
      let failure = flushed != 0 ? flushed : closed
      unlink(temporary)
      throw SaveFailure(reason: Self.reason(failure))
    }
    guard rename(temporary, path(target)) == 0 else {
      let failure = errno
      unlink(temporary)
      throw SaveFailure(reason: Self.reason(failure))
    }
  }

  func discard(_ target: DraftTarget) { unlink(path(target)) }

  private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
