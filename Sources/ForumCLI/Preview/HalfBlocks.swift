/// Pictures drawn with half blocks: each character cell shows two pixels stacked, the upper one
/// as the foreground colour of ▀ and the lower one as its background. A transparent pixel shows
/// the terminal's own background, using ▄ when only the lower pixel is drawn.
enum HalfBlocks {
  /// Pixels more transparent than this are left to the terminal's background.
  private static let visibleAlpha = 32
  private static let reset = "\u{1B}[0m"

  /// One string per cell row, each ending with a colour reset.
  static func lines(_ image: RGBAImage, trueColor: Bool, background: RGB) -> [String] {
    stride(from: 0, to: image.height, by: 2).map { y in
      var line = ""
      // The SGR parameters in force, so unchanged colours are not repeated cell after cell.
      var current: (foreground: String?, background: String?) = (nil, nil)
      for x in 0..<image.width {
        let top = color(image, x, y, over: background)
        let bottom = y + 1 < image.height ? color(image, x, y + 1, over: background) : nil
        let glyph: String
        let foreground: RGB?
        switch (top, bottom) {
        case (let upper?, _):
          (glyph, foreground) = ("\u{2580}", upper)
        case (nil, let lower?):
          (glyph, foreground) = ("\u{2584}", lower)
        case (nil, nil):
          (glyph, foreground) = (" ", nil)
        }
        let lowerInBackground = top != nil ? bottom : nil
        var parameters: [String] = []
        if let foreground {
          let code = sgr(foreground, base: 38, trueColor: trueColor)
          if code != current.foreground { parameters.append(code) }
          current.foreground = code
        }
        let backgroundCode =
          lowerInBackground.map { sgr($0, base: 48, trueColor: trueColor) } ?? "49"
        if backgroundCode != current.background { parameters.append(backgroundCode) }
        current.background = backgroundCode
        if !parameters.isEmpty { line += "\u{1B}[" + parameters.joined(separator: ";") + "m" }
        line += glyph
      }
      return line + reset
    }
  }

  /// The pixel blended onto the terminal background, or nil when it is (nearly) transparent.
  private static func color(_ image: RGBAImage, _ x: Int, _ y: Int, over background: RGB) -> RGB? {
    let p = image.pixel(x: x, y: y)
    let alpha = Int(p.a)
    guard alpha >= visibleAlpha else { return nil }
    func blend(_ value: UInt8, _ under: UInt8) -> UInt8 {
      UInt8((Int(value) * alpha + Int(under) * (255 - alpha) + 127) / 255)
    }
    return RGB(
      r: blend(p.r, background.r), g: blend(p.g, background.g), b: blend(p.b, background.b))
  }

  private static func sgr(_ color: RGB, base: Int, trueColor: Bool) -> String {
    trueColor
      ? "\(base);2;\(color.r);\(color.g);\(color.b)" : "\(base);5;\(paletteIndex(color))"
  }

  /// The nearest colour of the xterm palette: the 6×6×6 cube (16-231) or the grey ramp
  /// (232-255), whichever is closer.
  static func paletteIndex(_ color: RGB) -> Int {
    let levels = [0, 95, 135, 175, 215, 255]
    func level(_ value: UInt8) -> Int { value < 48 ? 0 : value < 115 ? 1 : (Int(value) - 35) / 40 }
    let cube = (level(color.r), level(color.g), level(color.b))
    let average = (Int(color.r) + Int(color.g) + Int(color.b)) / 3
    let grey = average > 238 ? 23 : max(0, (average - 3) / 10)
    func distance(_ r: Int, _ g: Int, _ b: Int) -> Int {
      let (dr, dg, db) = (r - Int(color.r), g - Int(color.g), b - Int(color.b))
      return dr * dr + dg * dg + db * db
    }
    let greyValue = 8 + grey * 10
    let cubeDistance = distance(levels[cube.0], levels[cube.1], levels[cube.2])
    return cubeDistance <= distance(greyValue, greyValue, greyValue)
      ? 16 + 36 * cube.0 + 6 * cube.1 + cube.2 : 232 + grey
  }
}
