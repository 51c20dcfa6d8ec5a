import Foundation
import HTTPTestSupport
import Testing

extension RemoteBoardTests {
  /// Without `FORUM_CA_FILE` a server's certificate is checked against the system's authorities
  /// as OpenSSL's hashed directory (`SSL_CERT_DIR`, else /etc/ssl/certs), where only the issuer
  /// the server names is read (libcurl's default, Debian's whole bundle file parsed at each
  /// command, cost 227 million instructions). An authority linked there by its hash is trusted;
  /// a directory of other authorities refuses the same server in one line.
  @Test func theSystemsAuthoritiesAreReadFromTheirHashedDirectory() throws {
    let forum = try ForumFixture()
    let served = try Served(forum)
    defer { _ = served.server.stop() }
    func hashedDirectory(_ name: String, trusting authority: String) throws -> String {
      let hash = try Clients.run(
        "/usr/bin/openssl", ["x509", "-subject_hash", "-noout", "-in", authority])
      #expect(hash.status == 0, "\(hash.summary)")
      let directory = forum.root + "/" + name
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
      try FileManager.default.createSymbolicLink(
        atPath: directory + "/" + hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
          + ".0", withDestinationPath: authority)
      return directory
    }

    let trusted = try hashedDirectory("trusted", trusting: served.authority.authorityFile)
    let listed = try served.run(["list"], environment: ["SSL_CERT_DIR": trusted])
    #expect(listed.status == 0, "\(listed.summary)")

    let elsewhere = forum.root + "/elsewhere"
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let stranger = try ThrowawayAuthority(in: elsewhere)
    let others = try hashedDirectory("others", trusting: stranger.authorityFile)
    let refused = try served.run(["list"], profile: "bob", environment: ["SSL_CERT_DIR": others])
    #expect(refused.status != 0)
    #expect(refused.stderrLines.count == 1, "\(refused.summary)")
    #expect(refused.stderr.contains("certificate nobody here vouches for"), "\(refused.summary)")
  }
}
