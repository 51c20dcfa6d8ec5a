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
}
