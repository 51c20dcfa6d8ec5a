/// What any one image may cost to decode. Checked from the container before a decoder runs (here)
/// and again while it runs (the C decoders get the same numbers), so a file that lies in its
/// header is still stopped.
public enum ImageBudget {
  /// Largest side of the canvas or of any frame.
  public static let maximumSide = 30_000
  /// Pixels of the canvas, and of any one frame.
  public static let maximumPixels = 100_000_000
  /// Pixels of all frames together (an animation decodes every frame to play).
  public static let maximumTotalPixels = 200_000_000
  /// JPEG scans: each is a pass over the whole picture, so a thousand tiny ones are a bomb.
  public static let maximumScans = 100
  /// Memory for decoder and resampler together, at any picture size.
  public static let maximumMemory = 64 * 1024 * 1024
  /// What a decoder may buffer for the whole picture (progressive JPEG coefficients, lossless
  /// WebP pixels, a WebP alpha plane); the rest of `maximumMemory` is rows and the preview.
  public static let maximumBuffered = 48 * 1024 * 1024
  /// CPU time for one decode.
  public static let maximumSeconds = 2.0

  /// Refuses a scanned picture over any budget, naming what was too large.
  static func check(_ scanned: ScannedImage, format: ImageFormat) throws {
    let name = format.displayName
    let (width, height) = (scanned.width, scanned.height)
    if width <= 0 || height <= 0 { throw ImageRejection.damaged(format, .noWidthOrHeight) }
    if let reason = sizeProblem(width, height) {
      throw ImageRejection(
        .unsupported, "\(name) image too large (\(reason))",
        cause: .tooLarge(format: name, frame: nil, width: width, height: height))
    }
    var total = 0
    for (index, frame) in scanned.frames.enumerated() {
      if let reason = sizeProblem(frame.width, frame.height) {
        throw ImageRejection(
          .unsupported, "\(name) frame \(index + 1) too large (\(reason))",
          cause: .tooLarge(format: name, frame: index + 1, width: frame.width, height: frame.height)
        )
      }
      total += frame.width * frame.height
    }
    if total > maximumTotalPixels {
      throw ImageRejection(
        .unsupported,
        "\(name) frames too large together (\(megapixels(total)) megapixels in "
          + "\(scanned.frames.count) frames; at most \(megapixels(maximumTotalPixels)))",
        cause: .framesTooLarge(
          format: name, megapixels: megapixels(total), frames: scanned.frames.count))
    }
    if scanned.scans > maximumScans {
      throw ImageRejection(
        .unsupported, "\(name) has too many scans (\(scanned.scans); at most \(maximumScans))",
        cause: .tooManyScans(format: name, scans: scanned.scans))
    }
    if scanned.bufferedBytes > maximumBuffered {
      throw ImageRejection(
        .unsupported,
        "\(name) needs too much memory to decode (\(mebibytes(scanned.bufferedBytes)) MB for "
          + "\(width)×\(height) \(scanned.bufferedWhat); at most \(mebibytes(maximumBuffered)) MB)",
        cause: .tooMuchMemory(format: name, megabytes: mebibytes(scanned.bufferedBytes)))
    }
  }

  private static func sizeProblem(_ width: Int, _ height: Int) -> String? {
    guard width > maximumSide || height > maximumSide || width * height > maximumPixels else {
      return nil
    }
    return "\(width)×\(height) pixels; at most \(maximumSide) a side and "
      + "\(megapixels(maximumPixels)) megapixels"
  }

  private static func megapixels(_ pixels: Int) -> Int { (pixels + 500_000) / 1_000_000 }
  private static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 19)) >> 20 }
}
