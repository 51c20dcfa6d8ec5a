/// Every generated file by name: the bombs each budget must stop and the honest huge pictures
/// that must still preview. Tests, the benchmark and the fuzz seeds all use this one list.
public enum GeneratedSet {
  public static let names = [
    "frame-bomb.gif", "scan-bomb.jpg", "bogus-progression.jpg", "long-animation.gif",
    "honest-100mp.png", "honest-100mp.gif", "frame-bomb.webp", "canvas-bomb.webp",
    "lossless-100mp.webp", "honest-12mp.webp", "animation.webp",
  ]

  public static func make(_ name: String) -> [UInt8] {
    switch name {
    case "frame-bomb.gif": return GIFImages.frameBomb()
    case "scan-bomb.jpg": return JPEGImages.scanBomb()
    case "bogus-progression.jpg":
      return JPEGImages.progressive(width: 64, height: 64, scans: 8, bogus: true)
    case "long-animation.gif": return GIFImages.animation(width: 5000, height: 5000, frames: 20)
    case "honest-100mp.png": return PNGImages.honest(width: 10000, height: 10000)
    case "honest-100mp.gif": return GIFImages.honest(width: 10000, height: 10000)
    case "frame-bomb.webp": return WebPImages.frameBomb()
    case "canvas-bomb.webp": return WebPImages.lossless(width: 16383, height: 16383)
    case "lossless-100mp.webp": return WebPImages.lossless(width: 10000, height: 10000)
    case "honest-12mp.webp": return WebPImages.lossless(width: 4000, height: 3000)
    case "animation.webp":
      return WebPImages.animation(canvas: (300, 200), frames: [(300, 200), (300, 200), (100, 100)])
    default: return []
    }
  }

  public static func all() -> [(String, [UInt8])] { names.map { ($0, make($0)) } }

  /// Small files of each kind, for seeding the fuzzers (Fuzz/seeds holds a copy).
  public static func seeds() -> [(String, [UInt8])] {
    [
      ("gif/flat.gif", GIFImages.honest(width: 7, height: 5)),
      ("gif/animation.gif", GIFImages.animation(width: 6, height: 4, frames: 3)),
      ("gif/frame-outside.gif", GIFImages.gif(screen: (4, 4), frames: [(9, 2)])),
      ("jpeg/progressive.jpg", JPEGImages.progressive(width: 24, height: 16, scans: 30)),
      ("jpeg/bogus.jpg", JPEGImages.progressive(width: 16, height: 16, scans: 4, bogus: true)),
      ("webp/lossless.webp", WebPImages.lossless(width: 9, height: 7)),
      ("webp/translucent.webp", WebPImages.lossless(width: 3, height: 3, color: [1, 2, 3, 4])),
      ("webp/animation.webp", WebPImages.animation(canvas: (8, 8), frames: [(8, 8), (4, 4)])),
      ("png/honest.png", PNGImages.honest(width: 12, height: 9)),
    ]
  }
}
