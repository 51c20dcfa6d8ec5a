import CImageDecode
import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Turns stored image bytes into pixels, shrunk while decoding so a 4000×3000 photo costs no
/// more than its preview: libjpeg scales in the IDCT, libwebp in its output, libpng and giflib
/// rows are averaged as they arrive. Every decode runs under `ImageBudget`.
enum ImageDecoder {
  /// No preview needs more pixels a side than this; it bounds the decoder's output buffer.
  static let largestSide = Int(CIMG_MAX_OUTPUT_SIDE)

  /// The budgets the C decoders enforce while they run.
  static var limits: cimg_limits {
    cimg_limits(
      max_pixels: Int64(ImageBudget.maximumPixels), max_side: Int32(ImageBudget.maximumSide),
      max_scans: Int32(ImageBudget.maximumScans), max_buffered: Int64(ImageBudget.maximumBuffered),
      max_seconds: ImageBudget.maximumSeconds, interrupted: { Interrupt.requested ? 1 : 0 })
  }

  /// Pixels of `data`, turned upright for `orientation` and fitted within
  /// `maxWidth`×`maxHeight` (never enlarged). Throws `ImageRejection` with a one-line reason
  /// ("cannot decode JPEG: Unsupported JPEG data precision 12"), or `ImageLibraryUnavailable`
  /// when the format's C library cannot be loaded.
  static func decode(
    _ data: Data, format: ImageFormat, maxWidth: Int, maxHeight: Int, orientation: Int = 1
  ) throws -> RGBAImage {
    // The container is checked first: a stored picture from an older version may be over a
    // budget it never met (a frame bomb whose header says 1×1); it is refused without decoding.
    _ = try ImagePreparer.prepare(data)
    // Bounds are for the upright picture; a quarter-turned one is stored the other way round.
    let sideways = (5...8).contains(orientation)
    let width = min(max(sideways ? maxHeight : maxWidth, 1), largestSide)
    let height = min(max(sideways ? maxWidth : maxHeight, 1), largestSide)
    let stored: RGBAImage
    switch format {
    case .png: stored = try decodeInC(data, format, width, height, cimg_decode_png)
    case .jpeg: stored = try decodeInC(data, format, width, height, cimg_decode_jpeg)
    case .gif: stored = try decodeInC(data, format, width, height, cimg_decode_gif)
    case .webp: stored = try decodeInC(data, format, width, height, cimg_decode_webp)
    }
    return stored.oriented(orientation)
  }

  static func decode(_ image: PreparedImage, maxWidth: Int, maxHeight: Int) throws -> RGBAImage {
    try decode(
      image.data, format: image.format, maxWidth: maxWidth, maxHeight: maxHeight,
      orientation: image.orientation)
  }

  /// Decodes every row of `image` (at a small size, which costs little) so that a picture that
  /// would not preview, or not within budget, is refused before it is stored.
  static func verify(_ image: PreparedImage) throws {
    _ = try decode(image, maxWidth: 64, maxHeight: 64)
  }

  private typealias CDecoder = (
    UnsafePointer<UInt8>?, Int, Int32, Int32, UnsafePointer<cimg_limits>?,
    UnsafeMutablePointer<cimg_image>?
  ) -> Int32

  private static func decodeInC(
    _ data: Data, _ format: ImageFormat, _ maxWidth: Int, _ maxHeight: Int, _ decoder: CDecoder
  ) throws -> RGBAImage {
    var result = cimg_image()
    defer { cimg_image_free(&result) }
    var limits = limits
    let status = data.withUnsafeBytes { raw in
      decoder(
        raw.bindMemory(to: UInt8.self).baseAddress, raw.count, Int32(maxWidth), Int32(maxHeight),
        &limits, &result)
    }
    guard status == 0, let pixels = result.pixels else {
      if result.missing_library != CIMG_LIBRARY_NONE {
        throw ImageLibraryUnavailable(result.missing_library, reason: message(of: &result))
      }
      throw ImageRejection.cannotDecode(format, message(of: &result))
    }
    let (width, height) = (Int(result.width), Int(result.height))
    return RGBAImage(
      width: width, height: height,
      pixels: Array(UnsafeBufferPointer(start: pixels, count: width * height * 4)))
  }

  /// The decoder's error text, on one line.
  static func message(of image: inout cimg_image) -> String {
    let text = withUnsafeBytes(of: &image.error) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
    return line.isEmpty ? "unknown error" : line
  }
}
