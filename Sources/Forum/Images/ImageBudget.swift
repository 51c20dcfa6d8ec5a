// `canImport`: the containers fuzz target compiles these files with the catalogue's in one module.
#if canImport(Refusals)
  import Refusals
#endif

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
    if tooLarge(width, height) {
      throw ImageRejection(.unsupported, sizeProblem(name, frame: nil, width, height))
    }
    var total = 0
    for (index, frame) in scanned.frames.enumerated() {
      if tooLarge(frame.width, frame.height) {
        throw ImageRejection(
          .unsupported, sizeProblem(name, frame: index + 1, frame.width, frame.height))
      }
      total += frame.width * frame.height
    }
    if total > maximumTotalPixels {
      throw ImageRejection(
        .unsupported,
        .framesTooLarge(
          format: name, megapixels: megapixels(total), frames: scanned.frames.count,
          maximumMegapixels: megapixels(maximumTotalPixels)))
    }
    if scanned.scans > maximumScans {
      throw ImageRejection(
        .unsupported, .tooManyScans(format: name, scans: scanned.scans, maximum: maximumScans))
    }
    if scanned.bufferedBytes > maximumBuffered {
      throw ImageRejection(
        .unsupported,
        .tooMuchMemory(
          format: name, megabytes: mebibytes(scanned.bufferedBytes), width: width, height: height,
          what: scanned.bufferedWhat, maximumMegabytes: mebibytes(maximumBuffered)))
    }
  }

  private static func tooLarge(_ width: Int, _ height: Int) -> Bool {
    width > maximumSide || height > maximumSide || width * height > maximumPixels
  }

  private static func sizeProblem(_ format: String, frame: Int?, _ width: Int, _ height: Int)
    -> ImageReason
  {
    .tooLarge(
      format: format, frame: frame, width: width, height: height, maximumSide: maximumSide,
      maximumMegapixels: megapixels(maximumPixels))
  }

  private static func megapixels(_ pixels: Int) -> Int { (pixels + 500_000) / 1_000_000 }
  private static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 19)) >> 20 }
}
