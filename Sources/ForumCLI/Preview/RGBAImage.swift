import CImageDecode

/// Decoded pixels: 8-bit RGBA with straight alpha, rows top to bottom.
struct RGBAImage: Equatable {
  var width: Int
  var height: Int
  var pixels: [UInt8]

  /// Red, green, blue and alpha of one pixel.
  func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
    let at = (y * width + x) * 4
    return (pixels[at], pixels[at + 1], pixels[at + 2], pixels[at + 3])
  }

  /// The size to draw a `width`×`height` picture within a box keeping its shape; larger than
  /// the picture only when `enlarge`.
  static func fit(
    width: Int, height: Int, maxWidth: Int, maxHeight: Int, enlarge: Bool
  ) -> (width: Int, height: Int) {
    var fitted: (Int32, Int32) = (0, 0)
    cimg_fit(
      Int32(clamping: width), Int32(clamping: height), Int32(clamping: maxWidth),
      Int32(clamping: maxHeight), enlarge ? 1 : 0, &fitted.0, &fitted.1)
    return (Int(fitted.0), Int(fitted.1))
  }

  /// The picture turned upright as its Exif orientation (1...8) says.
  func oriented(_ orientation: Int) -> RGBAImage {
    guard (2...8).contains(orientation) else { return self }
    let (w, h) = (width, height)
    let turned = orientation >= 5
    // For each pixel of the result, where it comes from in the stored picture.
    let source: (Int, Int) -> (Int, Int)
    switch orientation {
    case 2: source = { x, y in (w - 1 - x, y) }  // mirrored
    case 3: source = { x, y in (w - 1 - x, h - 1 - y) }  // upside down
    case 4: source = { x, y in (x, h - 1 - y) }  // mirrored upside down
    case 5: source = { x, y in (y, x) }  // transposed
    case 6: source = { x, y in (y, h - 1 - x) }  // needs a quarter turn clockwise
    case 7: source = { x, y in (w - 1 - y, h - 1 - x) }  // transversed
    default: source = { x, y in (w - 1 - y, x) }  // 8: needs a quarter turn anticlockwise
    }
    return remapped(width: turned ? h : w, height: turned ? w : h, from: source)
  }

  /// The picture scaled to exactly `width`×`height` by repeating pixels: for enlarging pictures
  /// smaller than the preview, where averaging has nothing to average.
  func enlarged(width newWidth: Int, height newHeight: Int) -> RGBAImage {
    guard newWidth != width || newHeight != height else { return self }
    return remapped(width: newWidth, height: newHeight) { x, y in
      (x * width / newWidth, y * height / newHeight)
    }
  }

  private func remapped(
    width newWidth: Int, height newHeight: Int, from source: (Int, Int) -> (Int, Int)
  ) -> RGBAImage {
    var result = [UInt8](repeating: 0, count: newWidth * newHeight * 4)
    for y in 0..<newHeight {
      for x in 0..<newWidth {
        let (sx, sy) = source(x, y)
        let from = (sy * width + sx) * 4
        let to = (y * newWidth + x) * 4
        result[to..<to + 4] = pixels[from..<from + 4]
      }
    }
    return RGBAImage(width: newWidth, height: newHeight, pixels: result)
  }
}
