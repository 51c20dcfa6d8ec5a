@_spi(Tools) import Datastore
import Foundation
import NCMBServer
import Spawning

/// The remote engine: a `forum serve` (an `NCMBService` behind the HTTPS server, in this
/// process, on loopback with a throwaway authority's certificate) over a database of `backing`,
/// reached by `https://127.0.0.1:PORT/`. Everyone opens the same URL and is told apart by their
/// sign-in, as on SQLite; the owner's location is the backing database's.
public struct RemoteFixture: EngineFixture {
  let backing: any EngineFixture
  /// How late the server may see a write made past it (`NCMBService.recheckMilliseconds`).
  let recheckMilliseconds: Int64

  public init(
    over backing: any EngineFixture,
    recheckMilliseconds: Int64 = NCMBService.recheckMilliseconds
  ) {
    self.backing = backing
    self.recheckMilliseconds = recheckMilliseconds
  }

  public var description: String { "remote→\(backing)" }

  public func makeDatabase(rules: EngineRules, indexes: [IndexSpec]) throws -> TestDatabase {
    let authority = try RemoteFixture.authority()
    let database = try backing.makeDatabase(rules: rules, indexes: indexes)
    // SQLite installs the rules when opened with them; the server opens with none.
    _ = try Datastore.open(database.ownerLocation, rules: rules, indexes: indexes)
    let service = try NCMBService(
      location: try database.serverLocation(), recheckMilliseconds: recheckMilliseconds)
    let server = try HTTPServer(
      address: ListenAddress(host: "127.0.0.1", port: 0),
      tls: HTTPServer.TLSIdentity(
        certificatePEM: Array(try Data(contentsOf: URL(fileURLWithPath: authority.certificate))),
        keyPEM: Array(try Data(contentsOf: URL(fileURLWithPath: authority.key)))),
      handler: service)
    let url = "https://127.0.0.1:\(server.port)/"
    return TestDatabase(
      engine: description, ownerLocation: database.ownerLocation, location: { _ in url },
      fingerprint: { try database.fingerprint() },
      remove: { server.stop(graceSeconds: 0) },
      execute: { [recheckMilliseconds] sqlite, postgres in
        try database.executeAsOwner(sqlite: sqlite, postgres: postgres)
        // A write past the server (another process's, on SQLite) is seen by its next request
        // once its last look at the database is this old: the edit is done when it is seen.
        usleep(UInt32(recheckMilliseconds + 1) * 1000)
      },
      serverLocation: { try database.serverLocation() }, backing: database)
  }

  private struct Authority {
    let certificate: String
    let key: String
  }

  private static let made: Result<Authority, Error> = Result {
    let directory = try makeTemporaryDirectory("RemoteFixture")
    let authority = directory + "/ca.pem"
    let authorityKey = directory + "/ca-key.pem"
    let certificate = directory + "/server.pem"
    let key = directory + "/server-key.pem"
    let extensions = directory + "/server.ext"
    try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(
      to: URL(fileURLWithPath: extensions))
    for arguments in [
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", authorityKey, "-out", authority, "-days", "2", "-subj", "/CN=forum tests",
      ],
      [
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
        key, "-out", directory + "/server.csr", "-subj", "/CN=localhost",
      ],
      [
        "x509", "-req", "-in", directory + "/server.csr", "-CA", authority, "-CAkey",
        authorityKey, "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile",
        extensions,
      ],
    ] {
      let process = ChildProcess()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
      process.arguments = arguments
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        throw POSIXError(.EIO)
      }
    }
    // The remote engine trusts this authority for every test of this process (not through
    // `setenv`: other tests start processes meanwhile, and `Process.run` reads `environ`).
    RemoteTrust.authorityFile.withLock { $0 = authority }
    return Authority(certificate: certificate, key: key)
  }

  private static func authority() throws -> Authority { try made.get() }
}
