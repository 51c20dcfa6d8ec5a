/// The one Exif fact the board keeps: which way up the picture goes. Everything else in an Exif
/// block (GPS position, camera, serial numbers, thumbnails) is dropped with it.
enum ExifOrientation {
  static let marker = Array("Exif\0\0".utf8)

  /// The Orientation tag (1...8) of a TIFF-structured Exif block, with or without the
  /// `Exif\0\0` prefix JPEG uses; nil when absent or malformed.
  static func read(_ exif: [UInt8]) -> Int? {
    let tiff = exif.starts(with: marker) ? Array(exif.dropFirst(marker.count)) : exif
    let read: (Int, Int) -> Int?
    if tiff.matches("II*\0", at: 0) {
      read = tiff.littleEndian
    } else if tiff.matches("MM\0*", at: 0) {
      read = tiff.bigEndian
    } else {
      return nil
    }
    guard let ifd = read(4, 4), let entries = read(ifd, 2) else { return nil }
    for entry in 0..<entries {
      let at = ifd + 2 + entry * 12
      guard let tag = read(at, 2), let type = read(at + 2, 2), let count = read(at + 4, 4) else {
        return nil
      }
      // SHORT is what the standard says; some writers use LONG.
      guard tag == 0x0112, count == 1 else { continue }
      let value = type == 3 ? read(at + 8, 2) : type == 4 ? read(at + 8, 4) : nil
      return value.flatMap { (1...8).contains($0) ? $0 : nil }
    }
    return nil
  }

  /// A big-endian TIFF block holding only IFD0 with one Orientation entry.
  static func minimalTIFF(orientation: Int) -> [UInt8] {
    var tiff = Array("MM\0*".utf8)
    tiff.appendBigEndian(8, 4)  // IFD0 right after the header
    tiff.appendBigEndian(1, 2)  // one entry
    tiff.appendBigEndian(0x0112, 2)
    tiff.appendBigEndian(3, 2)  // SHORT
    tiff.appendBigEndian(1, 4)
    tiff.appendBigEndian(orientation, 2)
    tiff.appendBigEndian(0, 2)  // value padding
    tiff.appendBigEndian(0, 4)  // no IFD1
    return tiff
  }

  /// What replaces an Exif block: the minimal block when the picture is turned, nothing otherwise.
  static func replacement(for exif: [UInt8]) -> (orientation: Int, tiff: [UInt8]?) {
    guard let orientation = read(exif), orientation != 1 else { return (1, nil) }
    return (orientation, minimalTIFF(orientation: orientation))
  }
}
