/// WebP: a RIFF file of chunks. Simple files hold one VP8 (lossy) or VP8L (lossless) chunk;
/// extended ones start with VP8X, whose flags announce the ICC, EXIF and XMP chunks that follow.
enum WebPContainer {
  private static let headerLength = 12
  private static let exifFlag: UInt8 = 0x08
  private static let xmpFlag: UInt8 = 0x04

  private struct Chunk {
    let fourCC: String
    /// Header, payload and padding byte.
    let range: Range<Int>
    let payload: Range<Int>
  }

  static func scan(_ b: [UInt8]) throws -> ScannedImage {
    guard let riffSize = b.littleEndian(4, 4), b.count >= headerLength else {
      throw ImageRejection.truncated(.webp)
    }
    let riffEnd = 8 + riffSize
    guard riffEnd <= b.count else {
      throw ImageRejection.truncated(.webp, .riffSizePastEnd)
    }
    let chunks = try readChunks(b, end: riffEnd)
    guard let first = chunks.first else { throw ImageRejection.damaged(.webp, .noImageData) }
    let (width, height) = try canvasSize(b, first)
    let imageChunks: Set<String> = ["VP8 ", "VP8L", "ANMF"]
    guard chunks.contains(where: { imageChunks.contains($0.fourCC) }) else {
      throw ImageRejection.damaged(.webp, .noImageData)
    }
    var copy = StrippedCopy(source: b)
    copy.keep(0..<headerLength)
    var orientation = 1
    var sawExif = false
    var keptExif = false
    for chunk in chunks {
      switch chunk.fourCC {
      case "EXIF" where !sawExif:
        // The first EXIF chunk tells the orientation; it is rewritten to hold only that.
        sawExif = true
        let (turned, tiff) = ExifOrientation.replacement(for: Array(b[chunk.payload]))
        orientation = turned
        if let tiff {
          keptExif = true
          copy.replace(chunk.range, with: serialize("EXIF", tiff), name: "Exif")
        } else {
          copy.drop("Exif")
        }
      case "EXIF":
        copy.drop("Exif")
      case "XMP ":
        copy.drop("XMP")
      default:
        copy.keep(chunk.range)
      }
    }
    copy.dropTail(after: riffEnd)
    if copy.changed {
      // The RIFF size and the VP8X flags must describe what is left.
      copy.overwrite(at: 4, with: littleEndian32(copy.bytes.count - 8))
      if first.fourCC == "VP8X" {
        let kept = b[first.payload.lowerBound] & ~(exifFlag | xmpFlag)
        let flags = kept | (keptExif ? exifFlag : 0)
        copy.overwrite(at: headerLength + 8, with: [flags])
      }
    }
    var scanned = ScannedImage(
      width: width, height: height, orientation: orientation, copy: copy)
    scanned.frames = frames(b, chunks)
    // Only the first image is decoded for a preview. Lossless pictures and alpha planes are
    // decoded whole before any row comes out.
    if let (kind, size) = firstImage(b, chunks, canvas: (width, height)) {
      let bytesPerPixel = kind == "VP8L" ? 4 : kind == "ALPH" ? 1 : 0
      scanned.bufferedBytes = size.0 * size.1 * bytesPerPixel
      scanned.bufferedWhat = kind == "VP8L" ? "lossless pixels" : "alpha plane"
    }
    return scanned
  }

  /// The size of every ANMF frame: offsets (2 × 3 bytes), then width - 1 and height - 1.
  private static func frames(_ b: [UInt8], _ chunks: [Chunk]) -> [(width: Int, height: Int)] {
    chunks.filter { $0.fourCC == "ANMF" }.compactMap { chunk in
      let at = chunk.payload.lowerBound
      guard chunk.payload.count >= 16, let width = b.littleEndian(at + 6, 3),
        let height = b.littleEndian(at + 9, 3)
      else { return nil }
      return (width + 1, height + 1)
    }
  }

  /// What kind of data the first picture is ("VP8L", "ALPH" for lossy with alpha, "VP8 ") and
  /// its size: the first ANMF frame of an animation, else the top-level image chunks.
  private static func firstImage(_ b: [UInt8], _ chunks: [Chunk], canvas: (Int, Int)) -> (
    String, (Int, Int)
  )? {
    if let frame = chunks.first(where: { $0.fourCC == "ANMF" }), frame.payload.count >= 24 {
      let at = frame.payload.lowerBound
      let size = (b.littleEndian(at + 6, 3)! + 1, b.littleEndian(at + 9, 3)! + 1)
      return (String(decoding: b[at + 16..<at + 20], as: UTF8.self), size)
    }
    if chunks.contains(where: { $0.fourCC == "VP8L" }) { return ("VP8L", canvas) }
    if chunks.contains(where: { $0.fourCC == "ALPH" }) { return ("ALPH", canvas) }
    return nil
  }

  private static func readChunks(_ b: [UInt8], end: Int) throws -> [Chunk] {
    var chunks = [Chunk]()
    var pos = headerLength
    while pos < end {
      guard let size = b.littleEndian(pos + 4, 4), pos + 8 + size <= end else {
        throw ImageRejection.truncated(.webp, .chunkPastEnd(nil))
      }
      let payload = pos + 8..<pos + 8 + size
      // Odd-sized payloads are padded to an even length; a missing last pad byte is tolerated.
      let chunkEnd = min(payload.upperBound + size % 2, end)
      chunks.append(
        Chunk(
          fourCC: String(decoding: b[pos..<pos + 4], as: UTF8.self), range: pos..<chunkEnd,
          payload: payload))
      pos = chunkEnd
    }
    return chunks
  }

  /// The picture size from the first chunk, which decides the kind of WebP file.
  private static func canvasSize(_ b: [UInt8], _ first: Chunk) throws -> (Int, Int) {
    let at = first.payload.lowerBound
    let size: (Int, Int)?
    switch first.fourCC {
    case "VP8 ":
      // A key frame: 3-byte frame tag, start code 9D 01 2A, then 14-bit width and height.
      let startCode =
        first.payload.count >= 10 && b[at + 3..<at + 6].elementsEqual([0x9D, 0x01, 0x2A])
      size =
        startCode ? (b.littleEndian(at + 6, 2)! & 0x3FFF, b.littleEndian(at + 8, 2)! & 0x3FFF) : nil
    case "VP8L":
      // Signature 0x2F, then width - 1 and height - 1 in 14 bits each.
      let bits = first.payload.count >= 5 && b[at] == 0x2F ? b.littleEndian(at + 1, 4) : nil
      size = bits.map { (($0 & 0x3FFF) + 1, (($0 >> 14) & 0x3FFF) + 1) }
    case "VP8X":
      // Flags, 3 reserved bytes, then canvas width - 1 and height - 1 in 24 bits each.
      size =
        first.payload.count >= 10
        ? (b.littleEndian(at + 4, 3)! + 1, b.littleEndian(at + 7, 3)! + 1) : nil
    default:
      throw ImageRejection.damaged(.webp, .unknownFirstChunk)
    }
    guard let size else { throw ImageRejection.damaged(.webp, .badHeader(first.fourCC)) }
    return size
  }

  private static func serialize(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
    var bytes = Array(fourCC.utf8) + littleEndian32(payload.count) + payload
    if payload.count % 2 == 1 { bytes.append(0) }
    return bytes
  }

  private static func littleEndian32(_ value: Int) -> [UInt8] {
    var bytes = [UInt8]()
    bytes.appendLittleEndian(value, 4)
    return bytes
  }
}
