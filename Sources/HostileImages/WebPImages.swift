/// Lossless WebPs written bit by bit: every prefix code holds a single symbol, which costs no
/// bits at all, so each pixel is free and a picture of any size is a few dozen bytes.
public enum WebPImages {
  /// A `width`×`height` picture of one colour (red, green, blue, alpha).
  public static func lossless(width: Int, height: Int, color: [UInt8] = [40, 120, 200, 255])
    -> [UInt8]
  {
    riff([chunk("VP8L", vp8l(width: width, height: height, color: color))])
  }

  /// An animation on a `canvas`: each frame a one-colour lossless picture of its given size at
  /// the top left.
  public static func animation(canvas: (Int, Int), frames: [(Int, Int)]) -> [UInt8] {
    var vp8x: [UInt8] = [0x12, 0, 0, 0]  // animation and alpha
    vp8x.appendLE(canvas.0 - 1, 3)
    vp8x.appendLE(canvas.1 - 1, 3)
    var chunks = [chunk("VP8X", vp8x), chunk("ANIM", [0, 0, 0, 0, 0, 0])]
    let colors: [[UInt8]] = [[200, 40, 40, 255], [40, 200, 40, 255], [40, 40, 200, 255]]
    for (index, frame) in frames.enumerated() {
      var header = [UInt8](repeating: 0, count: 6)  // x and y offsets
      header.appendLE(frame.0 - 1, 3)
      header.appendLE(frame.1 - 1, 3)
      header.appendLE(100, 3)  // 100 ms
      header.append(0)
      let picture = vp8l(width: frame.0, height: frame.1, color: colors[index % colors.count])
      chunks.append(chunk("ANMF", header + chunk("VP8L", picture)))
    }
    return riff(chunks)
  }

  /// A file whose canvas says 1×1 and whose one frame is 16383×16383 (268 megapixels).
  public static func frameBomb() -> [UInt8] {
    animation(canvas: (1, 1), frames: [(16383, 16383)])
  }

  static func vp8l(width: Int, height: Int, color: [UInt8]) -> [UInt8] {
    var bits = BitWriter(.lsbFirst)
    bits.write(0x2F, 8)
    bits.write(width - 1, 14)
    bits.write(height - 1, 14)
    bits.write(color[3] == 255 ? 0 : 1, 1)  // alpha used
    bits.write(0, 3)  // version
    bits.write(0, 1)  // no transform
    bits.write(0, 1)  // no colour cache
    bits.write(0, 1)  // no meta prefix codes
    // Green, red, blue, alpha, distance: each a simple code of one 8-bit symbol.
    for symbol in [color[1], color[0], color[2], color[3], 0] {
      bits.write(1, 1)  // simple code
      bits.write(0, 1)  // one symbol
      bits.write(1, 1)  // of 8 bits
      bits.write(Int(symbol), 8)
    }
    bits.flush()
    return bits.bytes
  }

  static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
    var bytes = Array(fourCC.utf8)
    bytes.appendLE(payload.count, 4)
    bytes += payload
    if payload.count % 2 == 1 { bytes.append(0) }
    return bytes
  }

  static func riff(_ chunks: [[UInt8]]) -> [UInt8] {
    let body = chunks.flatMap { $0 }
    var bytes = Array("RIFF".utf8)
    bytes.appendLE(body.count + 4, 4)
    return bytes + Array("WEBP".utf8) + body
  }
}
