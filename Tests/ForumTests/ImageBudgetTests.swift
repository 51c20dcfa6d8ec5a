import Foundation
import HostileImages
import Testing

@testable import Forum

/// `ImageBudget` from the container alone: each budget refuses in one line naming what was too
/// large, before any decoder runs, and what fits is accepted.
@Suite struct ImageBudgetTests {
  func refusal(_ bytes: [UInt8]) -> String? {
    do {
      _ = try ImagePreparer.prepare(Data(bytes))
      return nil
    } catch let rejection as ImageRejection {
      return rejection.reason
    } catch {
      return "\(error)"
    }
  }

  @Test func framesAreMeasuredOneByOneAndTogether() {
    #expect(refusal(GIFImages.frameBomb())?.hasPrefix("GIF frame 1 too large (65535×65535") == true)
    #expect(refusal(GIFImages.animation(width: 100, height: 100, frames: 3)) == nil)
    #expect(
      refusal(GIFImages.animation(width: 5000, height: 5000, frames: 9))
        == "GIF frames too large together (225 megapixels in 9 frames; at most 200)")
    #expect(refusal(WebPImages.frameBomb())?.hasPrefix("WebP frame 1 too large") == true)
  }

  @Test func jpegScansAreCounted() {
    #expect(refusal(JPEGImages.progressive(width: 64, height: 64, scans: 100)) == nil)
    #expect(
      refusal(JPEGImages.progressive(width: 64, height: 64, scans: 101))
        == "JPEG has too many scans (101; at most 100)")
  }

  @Test func wholePictureBuffersAreLimited() {
    // 6000×6000 greyscale progressive: 750×750 blocks of 128 bytes, 69 MB of coefficients.
    #expect(
      refusal(JPEGImages.progressive(width: 6000, height: 6000, scans: 2))
        == "JPEG needs too much memory to decode (69 MB for 6000×6000 coefficients; at most 48 MB)")
    #expect(refusal(JPEGImages.progressive(width: 4000, height: 4000, scans: 2)) == nil)
    #expect(refusal(WebPImages.lossless(width: 4000, height: 3000)) == nil)
    #expect(refusal(WebPImages.lossless(width: 4000, height: 3200))?.contains("memory") == true)
  }

  @Test func anHonestHundredMegapixelsFits() {
    #expect(refusal(GIFImages.honest(width: 10000, height: 10000)) == nil)
    #expect(refusal(GIFImages.honest(width: 10000, height: 10001))?.contains("too large") == true)
  }
}
