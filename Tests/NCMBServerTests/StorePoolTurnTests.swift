import Foundation
import Synchronization
import Testing

@testable import Datastore
@testable import NCMBServer

/// Turns for a database connection (`StorePool`): a give-back hands the connection to the one
/// waiter whose turn it is (the address holding fewest, then the first there) and wakes that one
/// alone; a waiter whose time runs out is refused and holds nothing.
@Suite("Pool turns")
struct StorePoolTurnTests {
  private func pool(capacity: Int) throws -> (StorePool, String) {
    let folder = NSTemporaryDirectory() + "pool-turns-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let location = folder + "/board.sqlite"
    return (StorePool(capacity: capacity) { try Datastore.open(location) }, folder)
  }

  /// A request from `party` that holds its connection until `release` is signalled; its
  /// party's name is recorded in `order` once it has the connection.
  private func hold(
    _ pool: StorePool, _ party: String, _ release: DispatchSemaphore, _ order: Order,
    wait: Double = 30
  ) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      _ = try? pool.with(party: party, wait: wait) { _ in
        order.append(party)
        release.wait()
      }
      done.signal()
    }
    return done
  }

  private func waitUntil(_ condition: () -> Bool) {
    for _ in 0..<2000 where !condition() { usleep(5000) }
  }

  @Test func theAddressHoldingFewestGoesFirst() throws {
    // Two connections, one address at most one of them.
    let (pool, folder) = try pool(capacity: 2)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let order = Order()
    let (a, b, laterA, c) = (
      DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0),
      DispatchSemaphore(value: 0)
    )
    let heldA = hold(pool, "a", a, order)
    waitUntil { order.names == ["a"] }
    let heldB = hold(pool, "b", b, order)
    waitUntil { order.names == ["a", "b"] }
    // Both connections lent: a's second request waits first, then c's.
    let waitingA = hold(pool, "a", laterA, order)
    waitUntil { pool.waitingCount == 1 }
    let waitingC = hold(pool, "c", c, order)
    waitUntil { pool.waitingCount == 2 }
    // b gives its connection back: a still holds its share, so c goes before a's second.
    b.signal()
    waitUntil { order.names.count == 3 }
    #expect(order.names == ["a", "b", "c"])
    #expect(pool.waitingCount == 1)
    a.signal()
    waitUntil { order.names.count == 4 }
    #expect(order.names == ["a", "b", "c", "a"])
    for semaphore in [laterA, c] { semaphore.signal() }
    for done in [heldA, heldB, waitingA, waitingC] { done.wait() }
  }

  @Test func aWaiterWhoseTimeRunsOutIsRefusedAndHoldsNothing() throws {
    let (pool, folder) = try pool(capacity: 1)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let order = Order()
    let release = DispatchSemaphore(value: 0)
    let held = hold(pool, "a", release, order)
    waitUntil { order.names == ["a"] }
    #expect {
      try pool.with(party: "b", wait: 0.1) { _ in }
    } throws: { ($0 as? NCMBError)?.code == "E429001" }
    #expect(pool.waitingCount == 0)
    release.signal()
    held.wait()
    // The refused waiter took no turn: the connection is free for the next request at once.
    try pool.with(party: "b", wait: 0.1) { _ in order.append("b") }
    #expect(order.names == ["a", "b"])
  }

  /// The write batches' connection is kept for them (`StorePool.withWriter`): reads that borrow
  /// and give back connections between two batches never take it, so SQLite's page cache of the
  /// writing connection is not emptied by another connection's commit. Lent from the top of
  /// the pool, batches went to whichever connection a read gave back last.
  @Test func theWriteBatchesKeepTheirConnection() throws {
    let (pool, folder) = try pool(capacity: 0)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var writers = Set<ObjectIdentifier>()
    var readers = Set<ObjectIdentifier>()
    for _ in 0..<10 {
      try pool.withWriter { writers.insert(ObjectIdentifier($0)) }
      // Two reads at once, given back in turn: one of theirs is then the pool's top.
      try pool.with(party: "a") { first in
        readers.insert(ObjectIdentifier(first))
        try pool.with(party: "b") { readers.insert(ObjectIdentifier($0)) }
      }
    }
    #expect(writers.count == 1)
    #expect(readers.isDisjoint(with: writers), "a read was lent the writer's connection")
  }
}

private final class Order: Sendable {
  private let list = Mutex<[String]>([])
  func append(_ name: String) { list.withLock { $0.append(name) } }
  var names: [String] { list.withLock { $0 } }
}
