import Forum

/// Where the prompt is: the current thread, what `next` and `prev` continue, and what the live
/// view has shown of the current thread. Its one owner is the session; commands and the live
/// view say what they showed or did through these methods, and nothing else writes the state,
/// so the rules that tie its parts together (another thread means nothing of it seen yet) hold
/// in one place.
final class Navigation {
  /// A listing `next` and `prev` continue.
  enum Listing {
    case threads(page: Int)
    case unread(page: Int)
    case thread(number: Int, page: Int)
    case search(SearchQuery, page: Int)
  }

  /// A search as typed, for `next` to turn its pages.
  struct SearchQuery {
    let terms: [String]
    let author: String?
    let thread: Int?
  }

  /// Only the interactive prompt has a current thread; scripts and one-shots never get one.
  let atPrompt: Bool

  /// The thread `show` (or a room) opened last at the prompt; `comment TEXT` and `/N` act on it.
  private(set) var currentThread: Int?
  /// In the current thread, the newest comment number already on screen; newer ones are
  /// printed as they arrive.
  private(set) var newestSeenComment: Int?
  /// What `next`/`prev` continue: the last listing or thread shown, and its page.
  private(set) var lastListing: Listing?
  /// The current thread as it was read: its id names its comments in the feed, its title tells
  /// an edit.
  private(set) var watched: ForumThread?
  /// Read positions the live view moved, by thread id.
  private(set) var readUpTo: [String: Int] = [:]

  init(atPrompt: Bool) {
    self.atPrompt = atPrompt
  }

  /// A listing was shown: `next` continues it.
  func listed(_ listing: Listing) {
    lastListing = listing
  }

  /// A page of `thread` was shown, comments up to `newest` on screen and read up to
  /// `shownUpTo`; at the prompt it becomes the current thread.
  func opened(_ thread: ForumThread, page: Int, newest: Int, shownUpTo: Int) {
    if atPrompt {
      enter(thread.number)
      newestSeenComment = newest
      watched = thread
      readUpTo[thread.objectId] = shownUpTo
    }
    lastListing = .thread(number: thread.number, page: page)
  }

  /// A room made `number` the current thread (or gave it back after a command inside it).
  func enter(_ number: Int?) {
    guard atPrompt || number == nil else { return }
    if number != currentThread { newestSeenComment = nil }
    currentThread = number
  }

  /// `leave`, or the current thread is gone (deleted here or by someone else).
  func leave() {
    enter(nil)
    watched = nil
  }

  /// The current thread's comments up to `number` are on screen (the live view printed them,
  /// a room showed them).
  func saw(upTo number: Int, in thread: Int) {
    guard thread == currentThread else { return }
    newestSeenComment = number
  }

  /// You posted `number` in `thread`: when nothing else arrived meanwhile it needs no echo.
  func posted(_ number: Int, in thread: Int) {
    if thread == currentThread, newestSeenComment == number - 1 { newestSeenComment = number }
  }

  /// The current thread read again (an edit of it, or the prompt moved to it).
  func watch(_ thread: ForumThread) {
    guard thread.number == currentThread else { return }
    watched = thread
  }

  /// The live view fell behind the change feed's window: the current thread as it was read may
  /// be stale, so it is read again when next needed.
  func missedChanges() {
    watched = nil
  }

  /// The live view marked `thread` read up to `number`.
  func markedRead(_ thread: ForumThread, upTo number: Int) {
    readUpTo[thread.objectId] = number
  }
}
