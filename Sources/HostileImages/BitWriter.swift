/// Bits packed into bytes, for the entropy-coded parts of the generated images. `lsbFirst` is the
/// order of GIF's LZW and deflate; JPEG packs most significant bit first and stuffs a zero byte
/// after every 0xFF.
struct BitWriter {
  enum Order { case lsbFirst, msbFirst }

  let order: Order
  var stuffJPEG = false
  private(set) var bytes: [UInt8] = []
  private var buffer: UInt64 = 0
  private var count = 0

  init(_ order: Order, stuffJPEG: Bool = false) {
    self.order = order
    self.stuffJPEG = stuffJPEG
  }

  /// Writes the low `width` bits of `value` (at most 32).
  mutating func write(_ value: Int, _ width: Int) {
    let bits = UInt64(value) & ((1 << UInt64(width)) - 1)
    switch order {
    case .lsbFirst:
      buffer |= bits << UInt64(count)
      count += width
      while count >= 8 {
        bytes.append(UInt8(buffer & 0xFF))
        buffer >>= 8
        count -= 8
      }
    case .msbFirst:
      buffer = buffer << UInt64(width) | bits
      count += width
      while count >= 8 {
        let byte = UInt8((buffer >> UInt64(count - 8)) & 0xFF)
        bytes.append(byte)
        if stuffJPEG && byte == 0xFF { bytes.append(0) }
        count -= 8
      }
      buffer &= (1 << UInt64(count)) - 1
    }
  }

  /// A Huffman code: deflate sends its codes most significant bit first inside an LSB-first
  /// stream, so they go out reversed.
  mutating func writeCode(_ code: Int, _ width: Int) {
    var reversed = 0
    for i in 0..<width where code & (1 << i) != 0 { reversed |= 1 << (width - 1 - i) }
    write(reversed, width)
  }

  /// Completes the last byte: with zeros (LSB-first), with ones (JPEG's padding).
  mutating func flush() {
    guard count > 0 else { return }
    switch order {
    case .lsbFirst: write(0, 8 - count)
    case .msbFirst: write((1 << (8 - count)) - 1, 8 - count)
    }
  }
}

extension Array where Element == UInt8 {
  mutating func appendBE(_ value: Int, _ size: Int) {
    for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
      append(UInt8(truncatingIfNeeded: value >> shift))
    }
  }

  mutating func appendLE(_ value: Int, _ size: Int) {
    for shift in stride(from: 0, to: size * 8, by: 8) {
      append(UInt8(truncatingIfNeeded: value >> shift))
    }
  }
}
