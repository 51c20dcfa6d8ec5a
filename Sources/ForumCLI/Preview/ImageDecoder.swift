import CImageDecode
import Forum
import Foundation

/// Turns stored image bytes into pixels, shrunk while decoding so a 4000×3000 photo costs no
/// more than its preview: libjpeg scales in the IDCT, libpng rows are averaged as they arrive.
enum ImageDecoder {
  /// No preview needs more pixels a side than this; it bounds the decoder's output buffer.
  static let largestSide = 4096

  /// Pixels of `data`, turned upright for `orientation` and fitted within
  /// `maxWidth`×`maxHeight` (never enlarged). Throws `ImageRejection` with a one-line reason
  /// ("cannot decode JPEG: Unsupported JPEG data precision 12").
  static func decode(
    _ data: Data, format: ImageFormat, maxWidth: Int, maxHeight: Int, orientation: Int = 1
  ) throws -> RGBAImage {
    // Bounds are for the upright picture; a quarter-turned one is stored the other way round.
    let sideways = (5...8).contains(orientation)
    let width = min(max(sideways ? maxHeight : maxWidth, 1), largestSide)
    let height = min(max(sideways ? maxWidth : maxHeight, 1), largestSide)
    let stored: RGBAImage
    switch format {
    case .png: stored = try decodeInC(data, format, width, height, cimg_decode_png)
    case .jpeg: stored = try decodeInC(data, format, width, height, cimg_decode_jpeg)
    case .gif: stored = try GIFDecoder.firstFrame([UInt8](data), maxWidth: width, maxHeight: height)
    case .webp: throw ImageRejection(.unsupported, "no WebP decoder to preview with")
    }
    return stored.oriented(orientation)
  }

  static func decode(_ image: PreparedImage, maxWidth: Int, maxHeight: Int) throws -> RGBAImage {
    try decode(
      image.data, format: image.format, maxWidth: maxWidth, maxHeight: maxHeight,
      orientation: image.orientation)
  }

  /// Decodes every row of `image` (at a small size, which costs little) so that a picture that
  /// would not preview is refused before it is stored. WebP passes on its container check alone.
  static func verify(_ image: PreparedImage) throws {
    guard image.format != .webp else { return }
    _ = try decode(image, maxWidth: 64, maxHeight: 64)
  }

  private typealias CDecoder = (
    UnsafePointer<UInt8>?, Int, Int32, Int32, UnsafeMutablePointer<cimg_image>?
  ) -> Int32

  private static func decodeInC(
    _ data: Data, _ format: ImageFormat, _ maxWidth: Int, _ maxHeight: Int, _ decoder: CDecoder
  ) throws -> RGBAImage {
    var result = cimg_image()
    defer { cimg_image_free(&result) }
    let status = data.withUnsafeBytes { raw in
      decoder(
        raw.bindMemory(to: UInt8.self).baseAddress, raw.count, Int32(maxWidth), Int32(maxHeight),
        &result)
    }
    guard status == 0, let pixels = result.pixels else {
      throw ImageRejection(
        .damaged, "cannot decode \(format.displayName): \(message(of: &result))")
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
