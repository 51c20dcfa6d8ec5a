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

  /// The file an older forum kept every draft of this kind in, whatever its target.
  var legacyFileName: String? {
    switch self {
    case .comment, .reply: return "comment.txt"
    case .message: return "message.txt"
    case .thread: return nil
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

/// Unsent drafts on disk, one per target, under `$XDG_STATE_HOME/forum/drafts/`: written as each
/// line is typed, so a crash or a refused post loses nothing; removed when the post goes
/// through or the person discards it.
struct DraftStore {
  let directory: String

  func path(_ target: DraftTarget) -> String { directory + "/" + target.fileName }

  /// The saved text, if any.
  func load(_ target: DraftTarget) -> String? { load(file: target.fileName) }

  /// A draft an older forum kept without its target, if any.
  func loadLegacy(_ target: DraftTarget) -> String? { target.legacyFileName.flatMap(load(file:)) }

  func discardLegacy(_ target: DraftTarget) {
    if let name = target.legacyFileName { unlink(directory + "/" + name) }
  }

  private func load(file name: String) -> String? {
    guard let data = FileManager.default.contents(atPath: directory + "/" + name), !data.isEmpty
    else { return nil }
    return String(decoding: data, as: UTF8.self)
  }

  /// How many unsent drafts are kept at most, one a target, for every profile and board of the
  /// account together (they share the directory): a new one past it is not saved, and is
  /// printed if it is not posted, so the directory cannot grow without end.
  static let limit = 50

  /// Why a draft could not be written: the system's words (a full disk, a directory that is
  /// not one), or nil when `limit` drafts are kept already.
  struct SaveFailure: Error {
    let reason: String?
  }

  /// The drafts kept now (an older forum's untargeted ones included).
  func count() -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.filter { $0.hasSuffix(".txt") }.count
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
