/// Why a file cannot be attached, in one line a person can act on ("truncated PNG").
/// The reason never names the path, so the caller can put it in front.
public struct ImageRejection: Error, Equatable, Sendable, CustomStringConvertible {
  public enum Kind: Sendable {
    /// Missing, unreadable, empty, a directory, a FIFO or a device.
    case unreadable
    /// Over the byte limit: the datastore's `E413001`.
    case overLimit
    /// Not one of the accepted formats.
    case notAnImage
    /// An accepted format, but cut short or corrupt.
    case damaged
    /// Well-formed, but something the board will not store or cannot show (12-bit JPEG, huge).
    case unsupported
  }

  /// What a refusal of a file (not of its bytes) is, as a value each language words itself.
  public enum Cause: Equatable, Sendable {
    case noFileName, empty, noSuchFile, permissionDenied, pathNotDirectory, directory
    case notRegularFile(what: String?)
    case overLimit(size: Int?, limit: Int)
    case notAnImage
    /// An accepted format cut short.
    case truncated(format: String, flaw: ImageFlaw?)
    /// An accepted format, corrupt.
    case damaged(format: String, flaw: ImageFlaw)
    /// Well-formed, but not what the board stores.
    case unsupported(format: String, flaw: ImageFlaw)
    /// The picture (or frame `frame`, from 1) is over `ImageBudget`'s size.
    case tooLarge(format: String, frame: Int?, width: Int, height: Int)
    /// Every frame together is over `ImageBudget.maximumTotalPixels`.
    case framesTooLarge(format: String, megapixels: Int, frames: Int)
    case tooManyScans(format: String, scans: Int)
    /// Decoding would buffer `megabytes` (over `ImageBudget.maximumBuffered`).
    case tooMuchMemory(format: String, megabytes: Int)
    /// The system library refused the bytes; `detail` is its own message.
    case cannotDecode(format: String, detail: String)
    /// A system error reading the file (`strerror`'s words).
    case system(String)
    /// Said only in `reason`.
    case other
  }

  public let kind: Kind
  public let reason: String
  public let cause: Cause
  /// The file's path, when the caller put it in front of the reason.
  public let path: String?

  public init(_ kind: Kind, _ reason: String, cause: Cause = .other, path: String? = nil) {
    self.kind = kind
    self.reason = reason
    self.cause = cause
    self.path = path
  }

  /// The same refusal naming the file it is about.
  public func about(_ path: String) -> ImageRejection {
    ImageRejection(kind, "\(path): \(reason)", cause: cause, path: path)
  }

  public var description: String { reason }

  /// The same refusal: the cause and path only word it.
  public static func == (a: ImageRejection, b: ImageRejection) -> Bool {
    a.kind == b.kind && a.reason == b.reason
  }

  static func truncated(_ format: ImageFormat, _ flaw: ImageFlaw? = nil) -> ImageRejection {
    ImageRejection(
      .damaged, "truncated \(format.displayName)" + (flaw.map { " (\($0))" } ?? ""),
      cause: .truncated(format: format.displayName, flaw: flaw))
  }

  static func damaged(_ format: ImageFormat, _ flaw: ImageFlaw) -> ImageRejection {
    ImageRejection(
      .damaged, "damaged \(format.displayName) (\(flaw))",
      cause: .damaged(format: format.displayName, flaw: flaw))
  }

  static func unsupported(_ format: ImageFormat, _ flaw: ImageFlaw) -> ImageRejection {
    ImageRejection(
      .unsupported, "unsupported \(format.displayName) (\(flaw))",
      cause: .unsupported(format: format.displayName, flaw: flaw))
  }

  /// The system decoder's refusal (`detail`: the library's message).
  public static func cannotDecode(_ format: ImageFormat, _ detail: String) -> ImageRejection {
    ImageRejection(
      .damaged, "cannot decode \(format.displayName): \(detail)",
      cause: .cannotDecode(format: format.displayName, detail: detail))
  }
}

/// What is wrong inside a picture's container, as a value each language words itself (the
/// English is `description`); chunk and marker names are the format's own.
public enum ImageFlaw: Equatable, Sendable, CustomStringConvertible {
  /// A chunk (of this type, when known) runs past the end of the file.
  case chunkPastEnd(String?)
  case riffSizePastEnd, noTrailer, noEndOfImage, segmentPastEnd
  case unknownFirstChunk
  /// A WebP `VP8 `/`VP8L`/`VP8X` header that cannot be read.
  case badHeader(String)
  case badFrameHeader, invalidChunkType, noImageData, noWidthOrHeight
  /// PNG: IHDR is not the first chunk.
  case headerNotFirst
  case badChecksum(String)
  case secondHeader, secondStartOfImage, unknownBlock, noHeader, noPalette, badSegmentLength
  case secondFrameHeader, scanBeforeFrameHeader, badImageHeader
  /// JPEG samples of this many bits (8 expected).
  case sampleBits(Int)
  case heightAfterScan, losslessOrHierarchical

  public var description: String {
    switch self {
    case .chunkPastEnd(let type):
      return (type.map { "\($0) " } ?? "") + "chunk runs past the end of the file"
    case .riffSizePastEnd: return "RIFF size exceeds the file"
    case .noTrailer: return "no trailer"
    case .noEndOfImage: return "no end-of-image marker"
    case .segmentPastEnd: return "segment runs past the end of the file"
    case .unknownFirstChunk: return "unknown first chunk"
    case .badHeader(let fourCC): return "bad \(fourCC) header"
    case .badFrameHeader: return "bad frame header"
    case .invalidChunkType: return "invalid chunk type"
    case .noImageData: return "no image data"
    case .noWidthOrHeight: return "no width or height"
    case .headerNotFirst: return "IHDR is not the first chunk"
    case .badChecksum(let type): return "bad checksum in \(type) chunk"
    case .secondHeader: return "second IHDR chunk"
    case .secondStartOfImage: return "second start-of-image marker"
    case .unknownBlock: return "unknown block"
    case .noHeader: return "no IHDR chunk"
    case .noPalette: return "palette image without a palette"
    case .badSegmentLength: return "bad segment length"
    case .secondFrameHeader: return "second frame header"
    case .scanBeforeFrameHeader: return "scan before frame header"
    case .badImageHeader: return "bad IHDR chunk"
    case .sampleBits(let bits): return "\(bits)-bit samples; 8-bit expected"
    case .heightAfterScan: return "height given after the scan"
    case .losslessOrHierarchical: return "lossless or hierarchical coding"
    }
  }
}
