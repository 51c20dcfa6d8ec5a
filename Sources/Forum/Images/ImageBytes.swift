/// Bounds-checked integer reads for the container parsers. Every read returns nil past the end,
/// so a lying length field in a hostile file can never trap.
extension Array where Element == UInt8 {
  func bigEndian(_ offset: Int, _ size: Int) -> Int? {
    guard offset >= 0, size <= 8, offset + size <= count else { return nil }
    return self[offset..<offset + size].reduce(0) { $0 << 8 | Int($1) }
  }

  func littleEndian(_ offset: Int, _ size: Int) -> Int? {
    guard offset >= 0, size <= 8, offset + size <= count else { return nil }
    return self[offset..<offset + size].reversed().reduce(0) { $0 << 8 | Int($1) }
  }

  func matches(_ text: String, at offset: Int) -> Bool {
    let magic = Array(text.utf8)
    return offset >= 0 && offset + magic.count <= count
      && self[offset..<offset + magic.count].elementsEqual(magic)
  }

  mutating func appendBigEndian(_ value: Int, _ size: Int) {
    for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
      append(UInt8(truncatingIfNeeded: value >> shift))
    }
  }

  mutating func appendLittleEndian(_ value: Int, _ size: Int) {
    for shift in stride(from: 0, to: size * 8, by: 8) {
      append(UInt8(truncatingIfNeeded: value >> shift))
    }
  }
}

/// The CRC-32 of PNG chunks (ISO 3309, reflected polynomial 0xEDB88320).
enum ImageCRC32 {
  private static let table: [UInt32] = (0..<256).map { n in
    (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
  }

  static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var crc = ~UInt32(0)
    bytes.withUnsafeBufferPointer { buffer in
      for byte in buffer { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
    return ~crc
  }
}
