import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// The live view: what happened in the current thread while the prompt waited.
extension Session {
  /// Comments posted to the current thread since it was shown, rendered, at most once a second;
  /// the prompt's idle hook prints them above the line being typed. A current thread that was
  /// deleted meanwhile is announced and left.
  func newCommentsInCurrentThread() -> [String] {
    guard let number = currentThread, let seen = newestSeenComment else { return [] }
    let now = Date().timeIntervalSince1970
    guard now - lastFollowCheck >= 1 else { return [] }
    lastFollowCheck = now
    let thread: ForumThread
    do {
      thread = try board.thread(number)
    } catch let error as DatastoreError where error.code == .notFound {
      currentThread = nil
      return [style.dim(messages.currentThreadGone(number))]
    } catch {
      return []
    }
    guard thread.lastCommentNumber > seen,
      let page = try? board.comments(
        of: thread, page: Board.lastPage(commentCount: thread.commentCount))
    else { return [] }
    newestSeenComment = thread.lastCommentNumber
    let fresh = page.items.filter { $0.number > seen }
    var lines = renderer.commentLines(fresh)
    let missed = thread.lastCommentNumber - seen - page.items.count
    if fresh.count == page.items.count, missed > 0 {
      lines.insert(style.dim(messages.moreNewComments(missed, thread: number)), at: 0)
    }
    return lines
  }

  /// Before a command runs at the prompt: a current thread that is gone is said and left, so
  /// the command is not refused for a reason the person cannot see.
  func leaveCurrentThreadIfGone() {
    guard let number = currentThread else { return }
    do {
      _ = try board.thread(number)
    } catch let error as DatastoreError where error.code == .notFound {
      currentThread = nil
      print(style.dim(messages.currentThreadGone(number)))
    } catch {}
  }

  /// Tab candidates for the word the cursor is in, given the line up to the cursor: command
  /// words first, then a command's options (for a word starting with `-`) or thread numbers
  /// (`#N` for `comment` inside a thread, where a bare number is prose).
  func completions(for line: String) -> [String] {
    var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    let partial = line.hasSuffix(" ") ? "" : (words.popLast() ?? "")
    guard let name = words.first else { return CommandRegistry.names }
    guard let command = CommandRegistry.named(name) else { return [] }
    let info = command.info
    if partial.hasPrefix("-") {
      return (info.options + info.flags + CommandInfo.commonFlags).map { "--" + $0 }
    }
    guard info.completion == .threads else { return [] }
    let numbers = (try? board.threads(page: 1).items.map { String($0.number) }) ?? []
    let prefix = info.text == .afterThread && currentThread != nil ? "#" : ""
    return numbers.map { prefix + $0 }
  }
}
