import Foundation
import Testing

@testable import NCMBServer

/// The write queue's waiters (`WriteQueue`): each sleeps until its batch has committed and is
/// woken once, with its answer. Counted by the kernel (each thread's voluntary
/// context switches, `/proc/thread-self/status`), not by the queue's own word.
@Suite("Write queue")
struct WriteQueueTests {
  /// Thread-safe slots for what each writer saw.
  final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var switches: [Int: Int] = [:]
    private var answers: [Int: Int] = [:]
    func record(_ index: Int, switches count: Int, status: Int) {
      lock.withLock {
        switches[index] = count
        answers[index] = status
      }
    }
    var all: (switches: [Int: Int], answers: [Int: Int]) { lock.withLock { (switches, answers) } }
  }

  /// This thread's voluntary context switches so far: each time it slept.
  private static func sleeps() throws -> Int {
    let status = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("voluntary_") })
    return try #require(Int(line.split(separator: "\t").last ?? ""))
  }

  /// Six writers queued behind a running batch are the next batch, and each slept once. One
  /// condition broadcast at every batch's answers and at its end woke each of them two or three
  /// times (17 sleeps or more).
  @Test func aWaitingWriterIsWokenOnlyForItsOwnTurn() throws {
    let release = DispatchSemaphore(value: 0)
    let firstRuns = DispatchSemaphore(value: 0)
    let batches = NSLock()
    nonisolated(unsafe) var sizes: [Int] = []
    let queue = WriteQueue(run: { requests in
      let first = batches.withLock {
        sizes.append(requests.count)
        return sizes.count == 1
      }
      if first {
        firstRuns.signal()
        release.wait()
      }
      return requests.map { HTTPResponse(status: Int($0.path.dropFirst()) ?? 0) }
    })
    let done = DispatchGroup()
    done.enter()
    Thread.detachNewThread {
      _ = queue.submit(HTTPRequest(method: "POST", path: "/200"))
      done.leave()
    }
    firstRuns.wait()
    let tally = Tally()
    let waiters = 6
    for index in 1...waiters {
      done.enter()
      Thread.detachNewThread {
        defer { done.leave() }
        guard let before = try? WriteQueueTests.sleeps() else { return }
        let answer = queue.submit(HTTPRequest(method: "POST", path: "/\(200 + index)"))
        guard let after = try? WriteQueueTests.sleeps() else { return }
        tally.record(index, switches: after - before, status: answer.status)
      }
    }
    let deadline = Date().addingTimeInterval(30)
    while queue.state.waiting < waiters, Date() < deadline { usleep(1_000) }
    #expect(queue.state.waiting == waiters)
    release.signal()
    #expect(done.wait(timeout: .now() + 30) == .success)

    let (switches, answers) = tally.all
    #expect(batches.withLock { sizes } == [1, waiters], "the six are one batch")
    #expect(answers == Dictionary(uniqueKeysWithValues: (1...waiters).map { ($0, 200 + $0) }))
    let slept = switches.values.reduce(0, +)
    #expect(switches.count == waiters)
    // One sleep each; a little room for a lock met taken.
    let each = switches.sorted { $0.key < $1.key }
    #expect(slept <= waiters + 2, "waiters slept \(slept) times: \(each)")
  }
  /// A lone request is answered once the upkeep after its batch has run (what its write queued
  /// is indexed): its client's next look finds the board at rest. Answered first, a test's
  /// fingerprint right after a write through the server saw the index change under it.
  @Test func aLoneRequestIsAnsweredAfterTheUpkeep() throws {
    let upkeeps = NSLock()
    nonisolated(unsafe) var ran: [Bool] = []
    let queue = WriteQueue(
      run: { $0.map { _ in HTTPResponse(status: 201) } },
      between: { idle in
        usleep(100_000)
        upkeeps.withLock { ran.append(idle) }
      })
    for _ in 0..<3 {
      let before = upkeeps.withLock { ran.count }
      #expect(queue.submit(HTTPRequest(method: "POST", path: "/")).status == 201)
      #expect(upkeeps.withLock { ran.count } == before + 1, "answered before the upkeep ran")
    }
    #expect(upkeeps.withLock { ran } == [true, true, true])
  }
}
