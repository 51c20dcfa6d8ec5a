/// JPEG: SOI, marker segments up to the frame and scan headers, entropy-coded data (with more
/// segments between scans in progressive files), EOI.
enum JPEGContainer {
  private static let startOfImage: UInt8 = 0xD8
  private static let endOfImage: UInt8 = 0xD9
  private static let startOfScan: UInt8 = 0xDA
  /// Frame types libjpeg-turbo decodes: baseline, extended, progressive, and their arithmetic
  /// variants. Lossless (C3, CB) and hierarchical (C5-C7, CD-CF) ones are refused.
  private static let supportedFrames: Set<UInt8> = [0xC0, 0xC1, 0xC2, 0xC9, 0xCA]
  private static let otherFrames: Set<UInt8> = [0xC3, 0xC5, 0xC6, 0xC7, 0xCB, 0xCD, 0xCE, 0xCF]

  static func scan(_ b: [UInt8]) throws -> ScannedImage {
    var copy = StrippedCopy(source: b)
    copy.keep(0..<2)
    var frame: Frame?
    var scans = 0
    var sawExif = false
    var orientation = 1
    var pos = 2
    var inScan = false
    while true {
      guard let at = nextMarker(b, from: pos) else {
        throw ImageRejection.truncated(.jpeg, .noEndOfImage)
      }
      // After a scan header come its entropy-coded data, kept; anywhere else bytes before a
      // marker are junk, which libjpeg skips, and are dropped. So are fill bytes (0xFF) before a
      // marker. Kept, either could join what follows a dropped segment into a new marker or
      // make the file start without one (both found by fuzzing).
      var keptEnd = inScan ? at : pos
      while keptEnd > pos && b[keptEnd - 1] == 0xFF { keptEnd -= 1 }
      copy.keep(pos..<keptEnd)
      if keptEnd < at { copy.drop(nil) }
      let marker = b[at + 1]
      inScan = marker == startOfScan
      switch marker {
      case endOfImage:
        guard let frame, scans > 0 else { throw ImageRejection.damaged(.jpeg, .noImageData) }
        copy.keep(at..<at + 2)
        copy.dropTail(after: at + 2)
        var scanned = ScannedImage(
          width: frame.width, height: frame.height, orientation: orientation, copy: copy)
        scanned.scans = scans
        // Progressive and multi-scan files keep every coefficient until the last scan.
        if frame.progressive || scans > 1 {
          scanned.bufferedBytes = frame.coefficientBytes
          scanned.bufferedWhat = "coefficients"
        }
        return scanned
      case startOfImage:
        throw ImageRejection.damaged(.jpeg, .secondStartOfImage)
      case 0x01:  // TEM stands alone, without a length
        copy.keep(at..<at + 2)
        pos = at + 2
        continue
      default:
        break
      }
      guard let length = b.bigEndian(at + 2, 2), at + 2 + length <= b.count else {
        throw ImageRejection.truncated(.jpeg, .segmentPastEnd)
      }
      guard length >= 2 else { throw ImageRejection.damaged(.jpeg, .badSegmentLength) }
      let end = at + 2 + length
      let payload = at + 4..<end
      if supportedFrames.contains(marker) {
        guard frame == nil else { throw ImageRejection.damaged(.jpeg, .secondFrameHeader) }
        frame = try parseFrame(b, payload, progressive: marker == 0xC2 || marker == 0xCA)
      } else if otherFrames.contains(marker) {
        throw ImageRejection.unsupported(.jpeg, .losslessOrHierarchical)
      }
      switch marker {
      case startOfScan:
        guard frame != nil else { throw ImageRejection.damaged(.jpeg, .scanBeforeFrameHeader) }
        scans += 1
        copy.keep(at..<end)
      case 0xE1 where !sawExif && b.matches("Exif\0\0", at: payload.lowerBound):
        // The first Exif block tells the orientation; it is rewritten to hold only that.
        sawExif = true
        let (turned, tiff) = ExifOrientation.replacement(for: Array(b[payload]))
        orientation = turned
        if let tiff {
          copy.replace(at..<end, with: segment(0xE1, ExifOrientation.marker + tiff), name: "Exif")
        } else {
          copy.drop("Exif")
        }
      case 0xE1:
        let isExif = b.matches("Exif\0\0", at: payload.lowerBound)
        let isXMP = b.matches("http://ns.adobe.com/", at: payload.lowerBound)
        copy.drop(isExif ? "Exif" : isXMP ? "XMP" : "APP1")
      case 0xE2 where !b.matches("ICC_PROFILE\0", at: payload.lowerBound):
        // Multi-picture index or FlashPix data; the pictures it points at are dropped as tail.
        copy.drop(b.matches("MPF\0", at: payload.lowerBound) ? "MPF" : "APP2")
      case 0xED:
        copy.drop("IPTC")
      case 0xE3...0xEF where marker != 0xEE:
        // Maker notes and the like; APP0 (JFIF), APP2 (ICC colour) and APP14 (Adobe colour
        // transform) stay since decoding needs them.
        copy.drop("APP\(marker - 0xE0)")
      default:
        copy.keep(at..<end)
      }
      pos = end
    }
  }

  /// The position of the next marker's 0xFF at or after `from`. Inside entropy-coded data 0xFF00
  /// is a stuffed byte and RSTn markers belong to the scan, so neither ends it.
  private static func nextMarker(_ b: [UInt8], from: Int) -> Int? {
    var i = from
    while i + 1 < b.count {
      guard b[i] == 0xFF else {
        i += 1
        continue
      }
      let next = b[i + 1]
      if next == 0xFF {
        i += 1
      } else if next == 0x00 || (0xD0...0xD7).contains(next) {
        i += 2
      } else {
        return i
      }
    }
    return nil
  }

  /// A frame header: the size, and what the decoder buffers for a multi-scan file.
  struct Frame {
    var width: Int
    var height: Int
    var progressive: Bool
    /// (horizontal, vertical) sampling factors of each component.
    var sampling: [(Int, Int)]

    /// libjpeg's whole-image coefficient buffer: 64 two-byte coefficients per 8×8 block of each
    /// component, padded to whole MCUs.
    var coefficientBytes: Int {
      let maxH = sampling.map(\.0).max() ?? 1
      let maxV = sampling.map(\.1).max() ?? 1
      return sampling.reduce(0) { total, factors in
        let columns = (width * factors.0 + maxH * 8 - 1) / (maxH * 8)
        let rows = (height * factors.1 + maxV * 8 - 1) / (maxV * 8)
        let padded = (
          (columns + factors.0 - 1) / factors.0 * factors.0,
          (rows + factors.1 - 1) / factors.1 * factors.1
        )
        return total + padded.0 * padded.1 * 128
      }
    }
  }

  private static func parseFrame(_ b: [UInt8], _ payload: Range<Int>, progressive: Bool) throws
    -> Frame
  {
    let at = payload.lowerBound
    guard payload.count >= 6, let height = b.bigEndian(at + 1, 2),
      let width = b.bigEndian(at + 3, 2)
    else { throw ImageRejection.damaged(.jpeg, .badFrameHeader) }
    let (precision, components) = (Int(b[at]), Int(b[at + 5]))
    guard precision == 8 else {
      throw ImageRejection.unsupported(.jpeg, .sampleBits(precision))
    }
    guard [1, 3, 4].contains(components), payload.count >= 6 + 3 * components else {
      throw ImageRejection.damaged(.jpeg, .badFrameHeader)
    }
    if height == 0 { throw ImageRejection.unsupported(.jpeg, .heightAfterScan) }
    let sampling = (0..<components).map { index -> (Int, Int) in
      let factors = Int(b[at + 6 + index * 3 + 1])
      return (max(1, factors >> 4), max(1, factors & 0x0F))
    }
    return Frame(width: width, height: height, progressive: progressive, sampling: sampling)
  }

  private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, marker]
    bytes.appendBigEndian(payload.count + 2, 2)
    return bytes + payload
  }
}
