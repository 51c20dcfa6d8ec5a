import CNettle

/// SHA-256, HMAC-SHA256 and base64 from nettle (GnuTLS's crypto library, Debian's nettle-dev),
/// linked from its static archive so a one-shot command maps no more shared libraries.
public enum Crypto {
  public static let digestSize = 32

  /// The SHA-256 digest of `message` (32 bytes).
  public static func sha256(_ message: some Collection<UInt8>) -> [UInt8] {
    var context = sha256_ctx()
    nettle_sha256_init(&context)
    feed(message) { nettle_sha256_update(&context, $0, $1) }
    var digest = [UInt8](repeating: 0, count: digestSize)
    nettle_sha256_digest(&context, digestSize, &digest)
    return digest
  }

  /// HMAC-SHA256 of `message` under `key` (RFC 2104; 32 bytes).
  public static func hmacSHA256(key: some Collection<UInt8>, message: some Collection<UInt8>)
    -> [UInt8]
  {
    var context = hmac_sha256_ctx()
    let key = Array(key)
    key.withUnsafeBufferPointer { nettle_hmac_sha256_set_key(&context, $0.count, $0.baseAddress) }
    feed(message) { nettle_hmac_sha256_update(&context, $0, $1) }
    var digest = [UInt8](repeating: 0, count: digestSize)
    nettle_hmac_sha256_digest(&context, digestSize, &digest)
    return digest
  }

  /// An HMAC-SHA256 key made ready once (its padded blocks hashed): a server checks every
  /// request's signature under the same client key.
  public struct HMACKey: Sendable {
    private var context = hmac_sha256_ctx()

    public init(_ key: some Collection<UInt8>) {
      let key = Array(key)
      key.withUnsafeBufferPointer { nettle_hmac_sha256_set_key(&context, $0.count, $0.baseAddress) }
    }

    /// A message fed in pieces (`update`), then its 32-byte code (`finish`).
    public struct Message {
      fileprivate var context: hmac_sha256_ctx

      public mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        nettle_hmac_sha256_update(&context, bytes.count, bytes.baseAddress)
      }

      public mutating func update(_ bytes: some Collection<UInt8>) {
        Crypto.feed(bytes) { nettle_hmac_sha256_update(&context, $0, $1) }
      }

      /// Writes the code into `digest` (at least `Crypto.digestSize` bytes).
      public mutating func finish(into digest: UnsafeMutableBufferPointer<UInt8>) {
        precondition(digest.count >= Crypto.digestSize)
        nettle_hmac_sha256_digest(&context, Crypto.digestSize, digest.baseAddress)
      }
    }

    /// A message under this key, starting from the prepared state (a copy: no hashing again).
    public func message() -> Message { Message(context: context) }
  }

  /// True when the two byte strings are equal, in time that does not depend on where they differ
  /// (signatures are compared with this).
  public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return a.withUnsafeBytes { x in
      b.withUnsafeBytes { y in nettle_memeql_sec(x.baseAddress, y.baseAddress, a.count) != 0 }
    }
  }

  /// `base64(bytes)`'s ASCII bytes.
  public static func base64Bytes(_ bytes: [UInt8]) -> [UInt8] {
    guard !bytes.isEmpty else { return [] }
    let length = (bytes.count + 2) / 3 * 4
    return [UInt8](unsafeUninitializedCapacity: length) { output, count in
      output.withMemoryRebound(to: CChar.self) { text in
        bytes.withUnsafeBufferPointer {
          nettle_base64_encode_raw(text.baseAddress, $0.count, $0.baseAddress)
        }
      }
      count = length
    }
  }

  /// Standard base64 (RFC 4648 §4) with `=` padding.
  public static func base64(_ bytes: some Collection<UInt8>) -> String {
    let input = Array(bytes)
    guard !input.isEmpty else { return "" }
    let length = (input.count + 2) / 3 * 4
    var output = [CChar](repeating: 0, count: length)
    input.withUnsafeBufferPointer { nettle_base64_encode_raw(&output, $0.count, $0.baseAddress) }
    return String(decoding: output.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The bytes of standard base64 text, or nil when it is not base64.
  public static func base64Decode(_ text: String) -> [UInt8]? {
    let input = Array(text.utf8)
    var context = base64_decode_ctx()
    nettle_base64_decode_init(&context)
    var output = [UInt8](repeating: 0, count: (input.count + 1) * 6 / 8 + 1)
    var produced = output.count
    let ok = input.withUnsafeBufferPointer { source in
      source.withMemoryRebound(to: CChar.self) {
        nettle_base64_decode_update(&context, &produced, &output, $0.count, $0.baseAddress)
      }
    }
    guard ok == 1, nettle_base64_decode_final(&context) == 1 else { return nil }
    return Array(output.prefix(produced))
  }

  /// Lower-case hex of `bytes`. Not generic: a one-shot command's first use of a generic over
  /// `[UInt8]` costs it the runtime's metadata lookups (see `SQLiteEngine.caller`).
  public static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Hands `message` to `update` in contiguous pieces without copying when it is contiguous.
  fileprivate static func feed(
    _ message: some Collection<UInt8>, _ update: (Int, UnsafePointer<UInt8>?) -> Void
  ) {
    let done: Void? = message.withContiguousStorageIfAvailable {
      update($0.count, $0.baseAddress)
    }
    if done == nil {
      let copy = Array(message)
      copy.withUnsafeBufferPointer { update($0.count, $0.baseAddress) }
    }
  }
}
