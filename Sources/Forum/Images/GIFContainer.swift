/// GIF: header, logical screen, optional colour table, then extension and image blocks (each a
/// chain of length-prefixed sub-blocks) up to the trailer.
enum GIFContainer {
  private static let headerLength = 13
  private static let extensionIntroducer: UInt8 = 0x21
  private static let imageSeparator: UInt8 = 0x2C
  private static let trailer: UInt8 = 0x3B

  static func scan(_ b: [UInt8]) throws -> ScannedImage {
    guard var width = b.littleEndian(6, 2), var height = b.littleEndian(8, 2),
      b.count >= headerLength
    else { throw ImageRejection.truncated(.gif) }
    var pos = headerLength + colorTableLength(b[10])
    guard pos <= b.count else { throw ImageRejection.truncated(.gif) }
    var copy = StrippedCopy(source: b)
    copy.keep(0..<pos)
    var frames: [(width: Int, height: Int)] = []
    while true {
      guard pos < b.count else { throw ImageRejection.truncated(.gif, .noTrailer) }
      switch b[pos] {
      case trailer:
        guard !frames.isEmpty else { throw ImageRejection.damaged(.gif, .noImageData) }
        copy.keep(pos..<pos + 1)
        copy.dropTail(after: pos + 1)
        return ScannedImage(
          width: width, height: height, orientation: 1, copy: copy, frames: frames)
      case extensionIntroducer:
        let end = try skipSubBlocks(b, from: pos + 2)
        let label = b[pos + 1]
        if label == 0xFE {
          copy.drop("comment")
        } else if label == 0xFF && b[pos + 2] == 11 && b.matches("XMP DataXMP", at: pos + 3) {
          copy.drop("XMP")
        } else {
          copy.keep(pos..<end)
        }
        pos = end
      case imageSeparator:
        guard let frameWidth = b.littleEndian(pos + 5, 2),
          let frameHeight = b.littleEndian(pos + 7, 2), pos + 10 < b.count
        else { throw ImageRejection.truncated(.gif) }
        // Some encoders leave the logical screen at 0×0; the first frame gives the size then.
        if frames.isEmpty && (width == 0 || height == 0) {
          (width, height) = (frameWidth, frameHeight)
        }
        // The byte after the colour table is the LZW minimum code size, then the data.
        let dataStart = pos + 10 + colorTableLength(b[pos + 9]) + 1
        let end = try skipSubBlocks(b, from: dataStart)
        copy.keep(pos..<end)
        frames.append((frameWidth, frameHeight))
        pos = end
      default:
        throw ImageRejection.damaged(.gif, .unknownBlock)
      }
    }
  }

  /// The size in bytes of the colour table a packed flags byte announces, 0 when there is none.
  static func colorTableLength(_ flags: UInt8) -> Int {
    flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 0x07) + 1)
  }

  /// The position after a chain of sub-blocks ending with an empty one.
  private static func skipSubBlocks(_ b: [UInt8], from start: Int) throws -> Int {
    var pos = start
    while pos < b.count {
      let size = Int(b[pos])
      pos += 1 + size
      if size == 0 { return pos }
    }
    throw ImageRejection.truncated(.gif)
  }
}
