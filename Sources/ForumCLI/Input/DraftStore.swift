#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Unsent drafts on disk, one per kind (a comment, a new thread), under
/// `$XDG_STATE_HOME/forum/drafts/`: written as each line is typed, so a crash or a refused post
/// loses nothing; removed when the post goes through or the person discards it.
struct DraftStore {
  enum Kind: String {
    case comment
    case thread
    case message
  }

  let directory: String

  func path(_ kind: Kind) -> String { directory + "/" + kind.rawValue + ".txt" }

  /// The saved text, if any.
  func load(_ kind: Kind) -> String? {
    guard let data = FileManager.default.contents(atPath: path(kind)), !data.isEmpty else {
      return nil
    }
    return String(decoding: data, as: UTF8.self)
  }

  /// Replaces the saved text (private to the user: 0600 in a 0700 directory).
  func save(_ text: String, as kind: Kind) {
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    let temporary = path(kind) + ".new"
    guard
      FileManager.default.createFile(
        atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    else { return }
    rename(temporary, path(kind))
  }

  func discard(_ kind: Kind) { unlink(path(kind)) }
}
