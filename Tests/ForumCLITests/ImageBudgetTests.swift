import Datastore
import Foundation
import Testing

@testable import Forum

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
