import Foundation
import PostgresTestCluster
import Spawning
import Testing

/// A killed test process never runs its `atexit`: the next test process stops its cluster.
@Suite struct AbandonedClusterSweepTests {
  private func directory(in parent: String, owner: pid_t?, running: Bool) throws -> String {
    let base = parent + "/" + PostgresTestCluster.directoryPrefix + UUID().uuidString
    try FileManager.default.createDirectory(
      atPath: base + "/data", withIntermediateDirectories: true)
    if let owner {
      try String(owner).write(
        toFile: base + "/" + PostgresTestCluster.ownerFile, atomically: false, encoding: .utf8)
    }
    if running {
      try "1\n".write(toFile: base + "/data/postmaster.pid", atomically: false, encoding: .utf8)
    }
    return base
  }

  /// The pid of a process that has exited and been reaped.
  private func deadProcess() throws -> pid_t {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/bin/true")
    try process.run()
    process.waitUntilExit()
    return process.processIdentifier
  }

  @Test func aDeadOwnersClusterIsStoppedAndRemovedAndNothingElse() throws {
    let parent = NSTemporaryDirectory() + "/sweep-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: parent) }
    let abandoned = try directory(in: parent, owner: try deadProcess(), running: true)
    let stoppedAlready = try directory(in: parent, owner: try deadProcess(), running: false)
    let ours = try directory(in: parent, owner: getpid(), running: true)
    let unowned = try directory(in: parent, owner: nil, running: true)
    var stopped: [String] = []
    PostgresTestCluster.sweepAbandoned(in: parent) { stopped.append($0) }
    #expect(stopped == [abandoned + "/data"])
    #expect(!FileManager.default.fileExists(atPath: abandoned))
    #expect(!FileManager.default.fileExists(atPath: stoppedAlready))
    #expect(FileManager.default.fileExists(atPath: ours))
    #expect(FileManager.default.fileExists(atPath: unowned))
  }
}
