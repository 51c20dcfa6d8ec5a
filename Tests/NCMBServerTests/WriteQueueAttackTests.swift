import Foundation
import Testing

@testable import NCMBServer

/// The write queue (`WriteQueue`) under load and at its end: every request gets exactly its own
/// answer whatever the timing of batches and upkeep, and a queue's writer thread does not
/// outlive the queue.
@Suite("Write queue under attack")
struct WriteQueueAttackTests {
  /// What each submitter saw, behind a lock.
  final class Seen: @unchecked Sendable {
    private let lock = NSLock()
    private var wrong: [String] = []
    private var answered = 0
    func note(_ id: Int, _ status: Int) {
      lock.withLock {
        answered += 1
        if status != id, wrong.count < 10 { wrong.append("\(id) got \(status)") }
      }
    }
    var all: (answered: Int, wrong: [String]) { lock.withLock { (answered, wrong) } }
  }

  /// The threads of this process now (`/proc/self/task`).
  static func threads() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
  }

  /// 8 threads submit 3,200 requests with random gaps while batches and the upkeep take random
  /// time (answers handed first or the upkeep first, as the queue is busy or idle): each request
  /// is answered once, with its own answer, within 20 s.
  @Test func everyRequestGetsItsOwnAnswerUnderRandomTiming() throws {
    let queue = WriteQueue(
      run: { requests in
        usleep(UInt32.random(in: 0...300))
        return requests.map { HTTPResponse(status: Int($0.path.dropFirst()) ?? -1) }
      },
      between: { _ in if Bool.random() { usleep(UInt32.random(in: 0...200)) } })
    let seen = Seen()
    let (threads, each) = (8, 400)
    let done = DispatchGroup()
    let deadline = Date().addingTimeInterval(20)
    for thread in 0..<threads {
      done.enter()
      Thread.detachNewThread {
        defer { done.leave() }
        for index in 0..<each where Date() < deadline {
          let id = 1_000 + thread * each + index
          seen.note(id, queue.submit(HTTPRequest(method: "POST", path: "/\(id)")).status)
          if index % 7 == 0 { usleep(UInt32.random(in: 0...100)) }
        }
      }
    }
    #expect(done.wait(timeout: .now() + 30) == .success, "a submitter hung")
    let (answered, wrong) = seen.all
    #expect(wrong.isEmpty, "\(wrong)")
    #expect(answered == threads * each, "\(answered) answered in 20 s")
    #expect(queue.state.written == answered)
    #expect(queue.state.largestBatch > 1)
  }

  /// A `run` that answers fewer requests than its batch held: the rest are answered E500001,
  /// none hangs.
  @Test func aRunThatLosesAnswersHangsNobody() throws {
    let queue = WriteQueue(run: { requests in
      usleep(2_000)
      return requests.dropLast().map { _ in HTTPResponse(status: 201) }
    })
    let done = DispatchGroup()
    let seen = Seen()
    for _ in 0..<6 {
      done.enter()
      Thread.detachNewThread {
        defer { done.leave() }
        seen.note(0, queue.submit(HTTPRequest(method: "POST", path: "/")).status)
      }
    }
    #expect(done.wait(timeout: .now() + 10) == .success, "a submitter hung")
    #expect(seen.all.answered == 6)
  }

  /// Twenty queues made, used and dropped: their writer threads end (the process's thread
  /// count comes back within a second), none is left behind sleeping.
  @Test func droppedQueuesLeaveNoThreads() throws {
    let before = Self.threads()
    for _ in 0..<20 {
      let queue = WriteQueue(run: { $0.map { _ in HTTPResponse(status: 201) } })
      #expect(queue.submit(HTTPRequest(method: "POST", path: "/")).status == 201)
    }
    let deadline = Date().addingTimeInterval(5)
    while Self.threads() > before, Date() < deadline { usleep(10_000) }
    #expect(Self.threads() <= before, "\(Self.threads() - before) threads left of 20 queues")
  }

  /// Once a request has its answer, its batch is no longer said to be written
  /// (`state.writing`): tests start a request and wait for `writing` to know that it holds the
  /// queue (GroupCommitTests), and a flag left set after the answers (while the writer wakes
  /// the requests, then runs the upkeep after a busy batch) made them queue the next requests
  /// into the same batch and time out after 60 s. Here the upkeep after a busy batch of 41
  /// takes 300 ms: its requests, answered, still saw `writing`.
  @Test func anAnsweredBatchIsNoLongerWriting() throws {
    let hold = DispatchSemaphore(value: 0)
    let held = DispatchSemaphore(value: 0)
    let batches = NSLock()
    nonisolated(unsafe) var count = 0
    let queue = WriteQueue(
      run: { requests in
        let number = batches.withLock {
          count += 1
          return count
        }
        // The first two batches wait to be let go.
        if number <= 2 {
          held.signal()
          hold.wait()
        }
        return requests.map { _ in HTTPResponse(status: 201) }
      },
      between: { idle in if !idle { usleep(300_000) } })
    let done = DispatchGroup()
    let sawWriting = Seen()
    func send(_ check: Bool) {
      done.enter()
      Thread.detachNewThread {
        defer { done.leave() }
        let status = queue.submit(HTTPRequest(method: "POST", path: "/")).status
        sawWriting.note(check && queue.state.writing ? 1 : 0, status == 201 ? 0 : 1)
      }
    }
    func waitFor(_ waiting: Int) {
      let deadline = Date().addingTimeInterval(10)
      while queue.state.waiting < waiting, Date() < deadline { usleep(1_000) }
    }
    send(false)
    held.wait()
    for _ in 0..<41 { send(true) }
    waitFor(41)
    hold.signal()
    held.wait()
    // One more behind the batch of 41: the upkeep then runs after its answers.
    send(false)
    waitFor(1)
    hold.signal()
    #expect(done.wait(timeout: .now() + 10) == .success)
    let (_, wrong) = sawWriting.all
    #expect(wrong.isEmpty, "answered requests saw a batch being written: \(wrong.count)")
  }
}
