import ForumCrypto
import Testing

@Suite("Crypto (nettle)")
struct CryptoTests {
  /// RFC 4231 test cases 1, 2 and 6 (a key longer than the block).
  @Test func hmacVectors() {
    #expect(
      Crypto.hex(
        Crypto.hmacSHA256(
          key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
        == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    #expect(
      Crypto.hex(
        Crypto.hmacSHA256(
          key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    #expect(
      Crypto.hex(
        Crypto.hmacSHA256(
          key: [UInt8](repeating: 0xaa, count: 131),
          message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
        == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
  }

  /// RFC 4648 §10.
  @Test(arguments: [
    ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
    ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
  ])
  func base64(_ plain: String, _ encoded: String) {
    #expect(Crypto.base64(Array(plain.utf8)) == encoded)
    #expect(Crypto.base64Decode(encoded) == Array(plain.utf8))
  }

  @Test func base64RefusesWhatIsNotBase64() {
    #expect(Crypto.base64Decode("Zm9v!") == nil)
    #expect(Crypto.base64Decode("Zm9vY") == nil)
  }

  @Test func constantTimeEqual() {
    #expect(Crypto.constantTimeEqual([1, 2, 3], [1, 2, 3]))
    #expect(!Crypto.constantTimeEqual([1, 2, 3], [1, 2, 4]))
    #expect(!Crypto.constantTimeEqual([1, 2], [1, 2, 3]))
  }

  @Test func sha256OfAMillionAs() {
    #expect(
      Crypto.hex(Crypto.sha256([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }
}
