/// GIFs built without an image library: one colour per frame, LZW-coded as tightly as the format
/// allows (each 12-bit code stands for up to 4,091 pixels), so a huge frame costs few bytes.
public enum GIFImages {
  /// The frame bomb: a 1×1 logical screen whose first frame says 65535×65535 (about 1.6 MB).
  public static func frameBomb() -> [UInt8] {
    gif(screen: (1, 1), frames: [(65535, 65535)])
  }

  /// An honest picture: the screen and its one frame are `width`×`height`.
  public static func honest(width: Int, height: Int) -> [UInt8] {
    gif(screen: (width, height), frames: [(width, height)])
  }

  /// A screen with several frames, each `frame` large, for the total-pixels budget.
  public static func animation(width: Int, height: Int, frames: Int) -> [UInt8] {
    gif(screen: (width, height), frames: Array(repeating: (width, height), count: frames))
  }

  static func gif(screen: (Int, Int), frames: [(Int, Int)]) -> [UInt8] {
    var bytes = Array("GIF89a".utf8)
    bytes.appendLE(screen.0, 2)
    bytes.appendLE(screen.1, 2)
    bytes += [0x81, 0, 0]  // a global table of 4 colours
    bytes += [200, 40, 40, 40, 120, 200, 250, 250, 250, 0, 0, 0]
    for (index, frame) in frames.enumerated() {
      if frames.count > 1 {
        bytes += [0x21, 0xF9, 4, 0, 10, 0, 0, 0]  // a graphic control block: 0.1 s per frame
      }
      bytes += [0x2C, 0, 0, 0, 0]
      bytes.appendLE(frame.0, 2)
      bytes.appendLE(frame.1, 2)
      bytes.append(0)
      bytes.append(2)  // LZW minimum code size
      let data = flatLZW(pixels: frame.0 * frame.1, color: index % 3)
      for start in stride(from: 0, to: data.count, by: 255) {
        let end = min(start + 255, data.count)
        bytes.append(UInt8(end - start))
        bytes += data[start..<end]
      }
      bytes.append(0)
    }
    bytes.append(0x3B)
    return bytes
  }

  /// `pixels` pixels of one colour: the literal, then codes 6, 7, … 4095 (entry k holds k - 4
  /// pixels, each made from the one before), then code 4095 again until the frame is full.
  static func flatLZW(pixels: Int, color: Int) -> [UInt8] {
    var writer = BitWriter(.lsbFirst)
    var codeSize = 3
    var next = 6
    writer.write(4, codeSize)  // clear
    writer.write(color, codeSize)
    var covered = 1
    // Mirrors the decoder: after each code past the first a table entry is added.
    func afterCode() {
      guard next < 4096 else { return }
      next += 1
      if next == 1 << codeSize && codeSize < 12 { codeSize += 1 }
    }
    while covered < pixels {
      let code = min(next, 4095)
      writer.write(code, codeSize)
      covered += code - 4
      afterCode()
    }
    writer.write(5, codeSize)  // end of information
    writer.flush()
    return writer.bytes
  }
}
