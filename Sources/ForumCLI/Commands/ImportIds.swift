import Datastore

/// comments, held at this cost rather than as strings.
struct PackedId: Hashable, Comparable {
  let high: UInt64
  let low: UInt64

  init?(_ id: String) {
    let bytes = Array(id.utf8)
    guard bytes.count == 16 else { return nil }
    var high: UInt64 = 0
    var low: UInt64 = 0
    for byte in bytes[0..<8] { high = high << 8 | UInt64(byte) }
    for byte in bytes[8..<16] { low = low << 8 | UInt64(byte) }
    self.high = high
    self.low = low
  }

  static func < (a: PackedId, b: PackedId) -> Bool {
    (a.high, a.low) < (b.high, b.low)
  }
}

/// The objectIds seen in one file: packed when they are NCMB's (any other is refused anyway).
struct SeenIds {
  private var packed = Set<PackedId>()
  private var other = Set<String>()

  mutating func insert(_ id: String) -> Bool {
    if let key = PackedId(id) { return packed.insert(key).inserted }
    return other.insert(id).inserted
  }
}

extension PackedId {
  /// The 16 characters it holds.
  var text: String {
    var bytes: [UInt8] = []
    for shift in stride(from: 56, through: 0, by: -8) {
      bytes.append(UInt8(high >> UInt64(shift) & 0xFF))
    }
    for shift in stride(from: 56, through: 0, by: -8) {
      bytes.append(UInt8(low >> UInt64(shift) & 0xFF))
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
