/// An object id as the read cache's indexes hold it: an id of up to 23 bytes (NCMB's are 16) in
/// three words, hashed and compared as such, with no string made for it; a longer one as text.
/// A server keeps an answer's every id (a page of 20 comments names 60), so making each a
/// `String` and hashing its bytes was a tenth of a kept find.
enum ObjectIdKey: Hashable, ExpressibleByStringLiteral {
  case packed(UInt64, UInt64, UInt64)
  case text(String)

  init(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count <= 23 else {
      self = .text(String(decoding: bytes, as: UTF8.self))
      return
    }
    var words: (UInt64, UInt64, UInt64) = (0, 0, UInt64(bytes.count) << 56)
    withUnsafeMutableBytes(of: &words) { raw in
      raw.copyMemory(from: UnsafeRawBufferPointer(bytes))
    }
    self = .packed(words.0, words.1, words.2)
  }

  init(_ id: String) {
    var id = id
    self = id.withUTF8 { ObjectIdKey($0) }
  }

  init(stringLiteral id: String) { self.init(id) }
}
