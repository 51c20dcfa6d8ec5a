/// PNG: signature, then chunks (length, type, data, CRC), IHDR first and IEND last.
enum PNGContainer {
  private static let signatureLength = 8

  static func scan(_ b: [UInt8]) throws -> ScannedImage {
    var copy = StrippedCopy(source: b)
    copy.keep(0..<signatureLength)
    var header: (width: Int, height: Int, colorType: Int)?
    var sawPalette = false
    var sawData = false
    var orientation = 1
    var pos = signatureLength
    while true {
      guard let length = b.bigEndian(pos, 4), pos + 8 <= b.count else {
        throw ImageRejection.truncated(.png)
      }
      let typeBytes = b[pos + 4..<pos + 8]
      guard typeBytes.allSatisfy({ (0x41...0x5A).contains($0 & 0xDF) }) else {
        throw ImageRejection.damaged(.png, .invalidChunkType)
      }
      let type = String(decoding: typeBytes, as: UTF8.self)
      let dataRange = pos + 8..<pos + 8 + length
      let end = dataRange.upperBound + 4
      // Lengths are at most 2^31 - 1 and must fit the file: the crashers carry huge ones that
      // would make a trusting reader allocate gigabytes.
      guard length <= 0x7FFF_FFFF, end <= b.count else {
        throw ImageRejection.truncated(.png, .chunkPastEnd(type))
      }
      if header == nil && type != "IHDR" {
        throw ImageRejection.damaged(.png, .headerNotFirst)
      }
      let critical = typeBytes.first! & 0x20 == 0
      if ImageCRC32.checksum(b[pos + 4..<dataRange.upperBound])
        != UInt32(b.bigEndian(dataRange.upperBound, 4)!)
      {
        // Like libpng: a corrupt critical chunk spoils the image, a corrupt ancillary one is
        // left out.
        if critical { throw ImageRejection.damaged(.png, .badChecksum(type)) }
        copy.drop(nil)
        pos = end
        continue
      }
      switch type {
      case "IHDR":
        guard header == nil else { throw ImageRejection.damaged(.png, .secondHeader) }
        header = try parseHeader(b, dataRange)
        copy.keep(pos..<end)
      case "PLTE":
        sawPalette = true
        copy.keep(pos..<end)
      case "IDAT":
        sawData = true
        copy.keep(pos..<end)
      case "IEND":
        guard sawData else { throw ImageRejection.damaged(.png, .noImageData) }
        guard let header else { throw ImageRejection.damaged(.png, .noHeader) }
        if header.colorType == 3 && !sawPalette {
          throw ImageRejection.damaged(.png, .noPalette)
        }
        copy.keep(pos..<end)
        copy.dropTail(after: end)
        return ScannedImage(
          width: header.width, height: header.height, orientation: orientation, copy: copy)
      case "eXIf":
        let (turned, tiff) = ExifOrientation.replacement(for: Array(b[dataRange]))
        orientation = turned
        if let tiff {
          copy.replace(pos..<end, with: chunk("eXIf", tiff), name: "Exif")
        } else {
          copy.drop("Exif")
        }
      case "tEXt", "zTXt", "iTXt":
        let isXMP = type == "iTXt" && b.matches("XML:com.adobe.xmp\0", at: dataRange.lowerBound)
        copy.drop(isXMP ? "XMP" : "text")
      default:
        copy.keep(pos..<end)
      }
      pos = end
    }
  }

  /// Width, height and colour type from IHDR, refusing combinations the standard does not allow.
  private static func parseHeader(_ b: [UInt8], _ range: Range<Int>) throws -> (
    width: Int, height: Int, colorType: Int
  ) {
    let at = range.lowerBound
    guard range.count == 13, let width = b.bigEndian(at, 4), let height = b.bigEndian(at + 4, 4)
    else { throw ImageRejection.damaged(.png, .badImageHeader) }
    let (depth, colorType) = (Int(b[at + 8]), Int(b[at + 9]))
    let allowedDepths: [Int: [Int]] = [
      0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
    ]
    guard allowedDepths[colorType]?.contains(depth) == true, b[at + 10] == 0, b[at + 11] == 0,
      b[at + 12] <= 1
    else { throw ImageRejection.damaged(.png, .badImageHeader) }
    return (width, height, colorType)
  }

  static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    var bytes = [UInt8]()
    bytes.appendBigEndian(data.count, 4)
    bytes += Array(type.utf8) + data
    bytes.appendBigEndian(Int(ImageCRC32.checksum(bytes[4...])), 4)
    return bytes
  }
}
