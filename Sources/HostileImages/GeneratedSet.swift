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
}
