import CImageDecode
import Datastore
import Foundation
import HostileImages
import Testing

@testable import Forum
@testable import ForumCLI

/// Image bombs through the `forum` binary: refused at attach in one line naming what was too
/// large, nothing stored; one stored by an older version shows its text line without decoding;
/// honest 100-megapixel pictures still attach and preview. The timeouts only turn a hang into a
/// failure: none of these runs takes more than a few seconds.
@Suite("Image budgets through the forum command")
struct ImageBudgetTests {
  static let hangTimeout: TimeInterval = 60

  @Test(
    "each bomb is refused at attach with one line naming what was too large, nothing stored",
    arguments: [
      ("frame-bomb.gif", "65535×65535"),
      ("scan-bomb.jpg", "scans"),
      ("bogus-progression.jpg", "progression"),
      ("long-animation.gif", "frames"),
      ("frame-bomb.webp", "16383×16383"),
      ("canvas-bomb.webp", "16383×16383"),
      ("lossless-100mp.webp", "memory"),
    ])
  func bombsAreRefused(name: String, named: String) throws {
    let fixture = try ForumFixture()
    let result = try fixture.run(
      ["new", "--title", "bomb", "--image", GeneratedImages.path(name)],
      timeout: ImageBudgetTests.hangTimeout)
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderrLines.count == 1, "\(result.summary)")
    #expect(result.stderr.hasPrefix("forum: cannot attach image: "), "\(result.summary)")
    #expect(result.stderr.contains(named), "\(result.summary)")
    #expect(try ImageAttachTests.counts(fixture) == (0, 0))
  }

  @Test(
    "an honest 100-megapixel picture attaches and previews",
    arguments: ["honest-100mp.png", "honest-100mp.gif", "honest-12mp.webp"])
  func honestHugePicturePreviews(name: String) throws {
    let fixture = try ForumFixture()
    let posted = try fixture.run(
      ["new", "--title", "big", "--image", GeneratedImages.path(name)],
      timeout: ImageBudgetTests.hangTimeout)
    #expect(posted.status == 0, "\(posted.summary)")
    let shown = try fixture.run(
      ["--images", "blocks", "image", "1"], timeout: ImageBudgetTests.hangTimeout)
    #expect(shown.status == 0, "\(shown.summary)")
    #expect(shown.stdout.contains("▀"), "\(shown.summary)")
    #expect(shown.stdout.contains("[image: "), "\(shown.summary)")
  }

  @Test(
    "a stored bomb (from an older version) shows its text line on show and image",
    arguments: [
      ("frame-bomb.gif", ImageFormat.gif), ("scan-bomb.jpg", .jpeg),
      ("bogus-progression.jpg", .jpeg), ("frame-bomb.webp", .webp),
    ])
  func storedBombShowsItsTextLine(name: String, format: ImageFormat) throws {
    let fixture = try ForumFixture()
    let board = try fixture.openBoard()
    // What an older version stored: the header's 1×1 and the bytes as they came.
    let image = PreparedImage(
      format: format, width: 1, height: 1, orientation: 1, data: try GeneratedImages.bytes(name),
      removedMetadata: [])
    _ = try board.createThread(title: "old", description: "", image: image)
    for command in [["show", "1"], ["image", "1"]] {
      let result = try fixture.run(
        ["--images", "blocks"] + command, timeout: ImageBudgetTests.hangTimeout)
      #expect(result.status == 0, "\(result.summary)")
      #expect(result.stdout.contains("[image: "), "\(result.summary)")
      #expect(!result.stdout.contains("▀") && !result.stdout.contains("▄"), "\(result.summary)")
    }
  }
}

/// The C decoders under their limits, in process: the CPU clock and the interrupt callback stop
/// every decoder mid-picture, and headers over the pixel budget are refused before decoding.
@Suite("decoder budgets")
struct DecoderBudgetTests {
  typealias Decoder =
    @Sendable (
      UnsafePointer<UInt8>?, Int, Int32, Int32, UnsafePointer<cimg_limits>?,
      UnsafeMutablePointer<cimg_image>?
    ) -> Int32

  static let pictures: [(String, [UInt8], Decoder)] = [
    ("PNG", PNGImages.honest(width: 64, height: 64), cimg_decode_png),
    ("GIF", GIFImages.honest(width: 64, height: 64), cimg_decode_gif),
    ("JPEG", JPEGImages.progressive(width: 64, height: 64, scans: 20), cimg_decode_jpeg),
    ("WebP", WebPImages.lossless(width: 64, height: 64), cimg_decode_webp),
  ]

  static func decode(_ bytes: [UInt8], _ decoder: Decoder, _ limits: cimg_limits) -> (
    Int32, String
  ) {
    var limits = limits
    var image = cimg_image()
    let status = decoder(bytes, bytes.count, 16, 16, &limits, &image)
    defer { cimg_image_free(&image) }
    return (status, status == 0 ? "" : ImageDecoder.message(of: &image))
  }

  @Test("within the limits every generated picture decodes")
  func decodes() {
    for (name, bytes, decoder) in DecoderBudgetTests.pictures {
      #expect(DecoderBudgetTests.decode(bytes, decoder, ImageDecoder.limits).0 == 0, "\(name)")
    }
  }

  @Test("no CPU time left stops every decoder with a one-line reason")
  func cpuBudget() {
    var limits = ImageDecoder.limits
    limits.max_seconds = 1e-12
    for (name, bytes, decoder) in DecoderBudgetTests.pictures {
      let (status, message) = DecoderBudgetTests.decode(bytes, decoder, limits)
      #expect(status == -1, "\(name)")
      #expect(message.contains("took too long"), "\(name): \(message)")
    }
  }

  @Test("an interrupt stops every decoder")
  func interrupt() {
    var limits = ImageDecoder.limits
    limits.interrupted = { 1 }
    for (name, bytes, decoder) in DecoderBudgetTests.pictures {
      let (status, message) = DecoderBudgetTests.decode(bytes, decoder, limits)
      #expect(status == -1 && message == "interrupted", "\(name): \(message)")
    }
  }

  @Test("a header over the pixel budget is refused before decoding")
  func pixelBudget() {
    var limits = ImageDecoder.limits
    limits.max_pixels = 1000
    for (name, bytes, decoder) in DecoderBudgetTests.pictures {
      let (status, message) = DecoderBudgetTests.decode(bytes, decoder, limits)
      #expect(status == -1 && message.contains("too large"), "\(name): \(message)")
    }
  }
}
