/// The image formats the board accepts, told by their bytes rather than their file name.
public enum ImageFormat: String, CaseIterable, Sendable {
  case png
  case jpeg
  case gif
  case webp

  public var mimeType: String { "image/\(rawValue)" }

  /// The extension a stored file gets, so a saved copy opens in the right viewer.
  public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

  /// The name people know the format by, as shown in `[image: cat.png 640×480 PNG 84 KB]`.
  public var displayName: String {
    switch self {
    case .png: return "PNG"
    case .jpeg: return "JPEG"
    case .gif: return "GIF"
    case .webp: return "WebP"
    }
  }

  /// The format whose signature starts `bytes`, or nil when it is none of the four.
  public static func sniff<Bytes: Collection>(_ bytes: Bytes) -> ImageFormat?
  where Bytes.Element == UInt8 {
    let head = Array(bytes.prefix(12))
    func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
      head.count >= offset + magic.count && Array(head[offset..<offset + magic.count]) == magic
    }
    if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
    if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
    if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
    if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
    return nil
  }

  /// The format stored under `mimeType`, for reading back an attachment.
  public init?(mimeType: String) {
    guard let format = ImageFormat.allCases.first(where: { $0.mimeType == mimeType }) else {
      return nil
    }
    self = format
  }
}
