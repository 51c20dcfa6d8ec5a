/// PNGs built without zlib: deflate with the fixed Huffman codes, where long runs become
/// back-references, so a 100-megapixel picture fits in a few megabytes.
public enum PNGImages {
  /// An honest `width`×`height` RGBA picture (vertical colour bands): the first row is a
  /// gradient sent with the Sub filter, every other row repeats it with the Up filter (all zero).
  public static func honest(width: Int, height: Int) -> [UInt8] {
    let rowBytes = width * 4
    var firstRow: [UInt8] = [1, 0, 0, 0, 255]  // Sub filter, then an opaque black pixel
    for _ in 1..<max(width, 1) { firstRow += [1, 2, 3, 0] }

    var writer = BitWriter(.lsbFirst)
    writer.write(1, 1)  // the last block
    writer.write(1, 2)  // fixed Huffman codes
    // The first row: five literals, one pixel's deltas, then a run copying them at distance 4.
    for byte in firstRow.prefix(9) { literal(&writer, Int(byte)) }
    repeatBytes(&writer, count: firstRow.count - 9, distance: 4)
    for _ in 1..<height {
      literal(&writer, 2)  // Up filter
      literal(&writer, 0)
      repeatBytes(&writer, count: rowBytes - 1, distance: 1)
    }
    writer.writeCode(0, 7)  // end of block (256)
    writer.flush()

    var adler = Adler32()
    adler.add(firstRow)
    for _ in 1..<height { adler.addUpRow(zeros: rowBytes) }
    let zlib = [0x78, 0x01] + writer.bytes + adler.bigEndian

    var ihdr = [UInt8]()
    ihdr.appendBE(width, 4)
    ihdr.appendBE(height, 4)
    ihdr += [8, 6, 0, 0, 0]  // 8-bit RGBA, not interlaced
    var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    png += chunk("IHDR", ihdr)
    for start in stride(from: 0, to: zlib.count, by: 1 << 16) {
      png += chunk("IDAT", Array(zlib[start..<min(start + (1 << 16), zlib.count)]))
    }
    png += chunk("IEND", [])
    return png
  }

  static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    var bytes = [UInt8]()
    bytes.appendBE(data.count, 4)
    let body = Array(type.utf8) + data
    bytes += body
    bytes.appendBE(Int(CRC32.checksum(body)), 4)
    return bytes
  }

  private static func literal(_ writer: inout BitWriter, _ value: Int) {
    if value < 144 {
      writer.writeCode(0x30 + value, 8)
    } else {
      writer.writeCode(0x190 + value - 144, 9)
    }
  }

  /// `count` bytes copied from `distance` (1...4) back, as matches of 258 and one shorter one.
  private static func repeatBytes(_ writer: inout BitWriter, count: Int, distance: Int) {
    var left = count
    while left > 0 {
      // Never leaves 1 or 2 bytes, which no match can carry (callers ask for 0 or at least 3).
      let length = left > 258 && left - 258 < 3 ? 255 : min(left, 258)
      if length == 258 {
        writer.writeCode(0xC5, 8)  // 285
      } else {
        let (symbol, extraBits, base) = lengthSymbol(length)
        if symbol < 280 {
          writer.writeCode(symbol - 256, 7)
        } else {
          writer.writeCode(0xC0 + symbol - 280, 8)
        }
        if extraBits > 0 { writer.write(length - base, extraBits) }
      }
      writer.writeCode(distance - 1, 5)  // distance codes 0...3 are distances 1...4
      left -= length
    }
  }

  private static func lengthSymbol(_ length: Int) -> (symbol: Int, extraBits: Int, base: Int) {
    let bases = [
      3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
      131, 163, 195, 227,
    ]
    let extras = [
      0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5,
    ]
    let index = bases.lastIndex { $0 <= length }!
    return (257 + index, extras[index], bases[index])
  }
}

/// zlib's checksum, with a shortcut for rows of one filter byte and zeros.
struct Adler32 {
  private var a = 1
  private var b = 0
  private static let modulus = 65521

  mutating func add(_ bytes: [UInt8]) {
    for byte in bytes {
      a = (a + Int(byte)) % Adler32.modulus
      b = (b + a) % Adler32.modulus
    }
  }

  /// A row holding the Up filter byte (2) and `zeros` zero bytes.
  mutating func addUpRow(zeros: Int) {
    a = (a + 2) % Adler32.modulus
    b = (b + a * ((zeros + 1) % Adler32.modulus)) % Adler32.modulus
  }

  var bigEndian: [UInt8] {
    var bytes = [UInt8]()
    bytes.appendBE(b << 16 | a, 4)
    return bytes
  }
}

enum CRC32 {
  private static let table: [UInt32] = (0..<256).map { n in
    (0..<8).reduce(UInt32(n)) { c, _ in c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
  }

  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    var crc = ~UInt32(0)
    bytes.withUnsafeBufferPointer { buffer in
      for byte in buffer { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
    return ~crc
  }
}
