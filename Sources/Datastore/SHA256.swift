import ForumCrypto

/// SHA-256 (FIPS 180-4) for hashing anonymous secrets and session tokens before they are stored:
/// nettle's (see `Crypto`). The tests check it against the standard's vectors, so the hashes of
/// boards made with the earlier hand-written implementation keep matching.
enum SHA256 {
  /// The 32-byte digest of `message`.
  static func hash(_ message: some Collection<UInt8>) -> [UInt8] { Crypto.sha256(message) }

  /// The digest of a string's UTF-8 bytes.
  static func hash(_ text: String) -> [UInt8] { Crypto.sha256(Array(text.utf8)) }

  /// Lower-case hex of a digest.
  static func hex(_ digest: [UInt8]) -> String { Crypto.hex(digest) }
}
