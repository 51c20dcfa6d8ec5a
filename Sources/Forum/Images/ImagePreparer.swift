#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// An image ready to store: checked, measured, and with location and camera metadata removed.
public struct PreparedImage: Sendable, Equatable {
  public let format: ImageFormat
  public let width: Int
  public let height: Int
  /// The Exif orientation (1...8) the picture keeps; 1 means upright as stored.
  public let orientation: Int
  /// The bytes to store: the input with metadata removed, or the input itself when it had none.
  public let data: Data
  /// What was removed, in file order without repeats ("Exif", "XMP", "text", "IPTC"); empty
  /// when nothing was.
  public let removedMetadata: [String]
}

/// Tells an image by its bytes and prepares it for storing. Pure Swift, no image library: it walks
/// the container structure only, so it is cheap enough to run on every upload and every read.
public enum ImagePreparer {
  /// Larger sides or pixel counts are refused: decoding them would take too much memory.
  public static let maximumSide = ImageBudget.maximumSide
  public static let maximumPixels = ImageBudget.maximumPixels

  /// Checks `data` is a whole PNG, JPEG, GIF or WebP of a sane size and strips its metadata.
  /// Throws `ImageRejection` with a one-line reason otherwise.
  public static func prepare(_ data: Data) throws -> PreparedImage {
    if data.isEmpty { throw ImageRejection(.unreadable, .empty) }
    guard let format = ImageFormat.sniff(data) else {
      throw ImageRejection(.notAnImage, .notAnImage)
    }
    let bytes = [UInt8](data)
    let scanned: ScannedImage
    switch format {
    case .png: scanned = try PNGContainer.scan(bytes)
    case .jpeg: scanned = try JPEGContainer.scan(bytes)
    case .gif: scanned = try GIFContainer.scan(bytes)
    case .webp: scanned = try WebPContainer.scan(bytes)
    }
    try ImageBudget.check(scanned, format: format)
    let (width, height) = (scanned.width, scanned.height)
    return PreparedImage(
      format: format, width: width, height: height, orientation: scanned.orientation,
      data: scanned.copy.changed ? Data(scanned.copy.bytes) : data,
      removedMetadata: scanned.copy.removed)
  }
}

/// What a container parser found.
struct ScannedImage {
  var width: Int
  var height: Int
  var orientation: Int
  var copy: StrippedCopy
  /// Sizes of the frames of an animation (GIF, animated WebP); empty for a still.
  var frames: [(width: Int, height: Int)] = []
  /// JPEG scans; 1 for other formats.
  var scans = 1
  /// Bytes the decoder must hold for the whole picture (progressive JPEG coefficients, lossless
  /// WebP pixels), and what they are; 0 when it decodes row by row.
  var bufferedBytes = 0
  var bufferedWhat = ""
}

/// The output of a container parser: the kept parts of the source, in order, plus whatever
/// replaces the dropped ones. Remembers whether anything changed, so untouched files are stored
/// byte for byte.
struct StrippedCopy {
  private let source: [UInt8]
  private(set) var bytes: [UInt8] = []
  private(set) var changed = false
  private(set) var removed: [String] = []

  init(source: [UInt8]) {
    self.source = source
    bytes.reserveCapacity(source.count)
  }

  mutating func keep(_ range: Range<Int>) {
    bytes.append(contentsOf: source[range])
  }

  /// Leaves a part out; `name` says what it was for `removedMetadata`, nil for plain junk
  /// (trailing bytes, a chunk with a bad checksum).
  mutating func drop(_ name: String?) {
    changed = true
    if let name, !removed.contains(name) { removed.append(name) }
  }

  /// Puts `replacement` where `range` was; a replacement identical to the original is a keep.
  mutating func replace(_ range: Range<Int>, with replacement: [UInt8], name: String) {
    if source[range].elementsEqual(replacement) { return keep(range) }
    drop(name)
    bytes.append(contentsOf: replacement)
  }

  /// Patches bytes already in the output, for length fields that must describe the new contents.
  mutating func overwrite(at offset: Int, with patch: [UInt8]) {
    bytes.replaceSubrange(offset..<offset + patch.count, with: patch)
  }

  /// Drops whatever follows `end`: data after the end marker can hide anything.
  mutating func dropTail(after end: Int) {
    if end < source.count { drop(nil) }
  }
}
