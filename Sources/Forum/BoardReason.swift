import Datastore

/// Why the board refused or found nothing, as a value with its arguments (`DatastoreError.reason`):
/// the CLI's `Messages` says each in English or Japanese; `description` is the English, the words
/// an API client reads.
public enum BoardReason: ErrorReason, Equatable {
  case noThread(Int)
  case noComment(thread: Int, comment: Int)
  /// `label` (`#12`, `12/3`) was taken down.
  case takenDown(label: String)
  case noUser(handle: String)
  /// A name that is no handle and no one's display name (not repeated: it may carry escapes).
  case noSuchUser
  /// Several people are called `name` (display names), and it is nobody's handle: the first
  /// few of their handles (well-formed, safe to repeat), and how many there are.
  case severalNamed(name: String, handles: [String], count: Int)
  case noConversation(handle: String)
  case noImage(thread: Int)
  case conversationNeedsSomeoneElse
  /// Thread numbers, comment numbers and pages start at 1.
  case startsAtOne(Numbered)
  /// A text over its limit of characters.
  case tooLong(field: String, characters: Int, limit: Int)
  /// A text over its limit of UTF-8 bytes.
  case tooManyBytes(field: String, bytes: Int, limit: Int)
  /// An app's object of a board class that would cost readers more than `limit` (its JSON
  /// bytes plus 64 a value).
  case tooCostlyToRead(cost: Int, limit: Int)
  case containsControlCharacters(field: String)
  case containsLineBreak(field: String)
  /// A character carrying more combining marks than `limit`.
  case tooManyMarks(field: String, marks: Int, limit: Int)
  /// A character made of more code points than `limit`.
  case tooManyCodePoints(field: String, codePoints: Int, limit: Int)
  case queryTooLong(limit: Int)
  case cannotBanYourself
  case onlyOwnerChoosesModerators
  case onlyOwnerListsModerators
  /// Someone else's post: only its `author` (and moderators, when deleting) may.
  case onlyAuthorMayDelete(author: String, label: String)
  case onlyAuthorMayEdit(author: String, label: String)
  case imageIsTheBoards
  case threadKeepsItsPicture
  /// Only public threads are pinned (a pin leads everyone's `list`).
  case privateThreadNotPinned(Int)

  public enum Numbered: String, Sendable, Equatable {
    case thread, comment, pages
  }

  public var description: String {
    switch self {
    case .noThread(let number): return "there is no thread #\(number)"
    case .noComment(let thread, let comment): return "there is no comment \(thread)/\(comment)"
    case .takenDown(let label): return "\(label) was deleted by a moderator"
    case .noUser(let handle): return "there is no user @\(handle)"
    case .noSuchUser: return "no such user"
    case .severalNamed(let name, let handles, let count):
      return "\(count) people are called \(name); say which by handle: "
        + BoardReason.handleList(handles, count: count)
    case .noConversation(let handle): return "no conversation with @\(handle) yet"
    case .noImage(let thread): return "thread #\(thread) has no image"
    case .conversationNeedsSomeoneElse: return "a conversation needs someone else"
    case .startsAtOne(let what):
      return what == .pages ? "pages start at 1" : "\(what.rawValue) numbers start at 1"
    case .tooLong(let field, let characters, let limit):
      return "\(field) is \(characters) characters; the limit is \(limit)"
    case .tooManyBytes(let field, let bytes, let limit):
      return "\(field) is \(bytes) bytes of UTF-8; the limit is \(limit)"
    case .tooCostlyToRead(let cost, let limit):
      return "object costs \(cost) bytes to read (its JSON plus 64 a value); the limit is \(limit)"
    case .containsControlCharacters(let field):
      return "\(field) must not contain control characters"
    case .containsLineBreak(let field): return "\(field) must not contain a line break"
    case .tooManyMarks(let field, let marks, let limit):
      return "\(field) has a character with \(marks) combining marks; at most \(limit)"
    case .tooManyCodePoints(let field, let codePoints, let limit):
      return "\(field) has a character made of \(codePoints) code points; at most \(limit)"
    case .queryTooLong(let limit): return "longer than \(limit) characters"
    case .cannotBanYourself: return "you cannot ban yourself"
    case .onlyOwnerChoosesModerators: return "only the board's owner may choose moderators"
    case .onlyOwnerListsModerators: return "only the board's owner may list moderators"
    case .onlyAuthorMayDelete(let author, let label):
      return "only \(author) (the author) and moderators may delete \(label)"
    case .onlyAuthorMayEdit(let author, let label):
      return "only \(author) (the author) may edit \(label)"
    case .imageIsTheBoards: return "set by the board, not by apps"
    case .threadKeepsItsPicture: return "a thread keeps its picture"
    case .privateThreadNotPinned(let number):
      return "#\(number) is private: only public threads are pinned"
    }
  }

  /// `@a, @b, … and N more`.
  public static func handleList(_ handles: [String], count: Int) -> String {
    handles.map { "@" + $0 }.joined(separator: ", ")
      + (count > handles.count ? ", … and \(count - handles.count) more" : "")
  }
}
