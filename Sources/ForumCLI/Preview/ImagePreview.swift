import CImageDecode
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A terminal area for a picture, in character cells.
struct PreviewBox: Equatable, Sendable {
  var columns: Int
  var rows: Int

  /// The preview in a thread view: about a 200-pixel picture's worth, 32 cells at most and never
  /// wider than the terminal. The box is square on screen (cells are about twice as high as
  /// wide).
  static func thumbnail(terminalColumns: Int) -> PreviewBox {
    let columns = min(32, max(2, terminalColumns - 1))
    return PreviewBox(columns: columns, rows: max(1, columns / 2))
  }

  /// `image THREAD`: as large as the terminal allows, leaving lines for the caption and prompt.
  static func full(terminalColumns: Int, terminalRows: Int) -> PreviewBox {
    PreviewBox(columns: max(2, terminalColumns - 1), rows: max(1, terminalRows - 3))
  }
}

/// Drawing an attached picture on a terminal, or describing it in one line where it cannot be.
enum ImagePreview {
  /// Pixels per cell assumed when sending a real image: a common 10×20 font cell.
  static let cellPixels = (width: 10, height: 20)

  /// The seed app's speech bubble, drawn where a thread has no image.
  static let placeholder = ["╭─────────╮", "│ ·  ·  · │", "╰─┬───────╯", "  ╰"]

  /// The picture drawn for `mode`, fitted in `box` (small pictures are enlarged to fill it), as
  /// lines to print; kitty and iTerm2 get one line holding the image escape sequence. Throws
  /// `ImageRejection` when it cannot be decoded (a WebP, a damaged file).
  static func lines(
    _ image: PreparedImage, mode: ImageRenderMode, box: PreviewBox, background: RGB = .black
  ) throws -> [String] {
    let sideways = (5...8).contains(image.orientation)
    // In half-block pixels: a cell is one pixel wide and two high.
    let size = RGBAImage.fit(
      width: sideways ? image.height : image.width, height: sideways ? image.width : image.height,
      maxWidth: box.columns, maxHeight: box.rows * 2, enlarge: true)
    let rows = (size.height + 1) / 2
    switch mode {
    case .trueColorBlocks, .paletteBlocks:
      let pixels = try ImageDecoder.decode(image, maxWidth: size.width, maxHeight: size.height)
        .enlarged(width: size.width, height: size.height)
      return HalfBlocks.lines(pixels, trueColor: mode == .trueColorBlocks, background: background)
    case .kitty, .iterm:
      // The terminal scales the picture into the cells; send only about as many pixels as
      // those cells show.
      let pixels = try ImageDecoder.decode(
        image, maxWidth: size.width * cellPixels.width, maxHeight: rows * cellPixels.height)
      let png = try encodePNG(pixels)
      return [
        mode == .kitty
          ? InlineImage.kitty(png: png, columns: size.width)
          : InlineImage.iterm(png: png, columns: size.width, rows: rows)
      ]
    }
  }

  /// `[image: cat.png 640×480 PNG 84 KB]`, for pipes, colourless terminals and pictures that
  /// cannot be drawn.
  static func textLine(
    name: String, format: ImageFormat, width: Int, height: Int, byteCount: Int
  ) -> String {
    "[image: \(SafeText.sanitize(name)) \(width)×\(height) \(format.displayName) "
      + "\(ImageFile.formatSize(byteCount))]"
  }

  private static func encodePNG(_ image: RGBAImage) throws -> [UInt8] {
    if let missing = ImageLibraryUnavailable.check(CIMG_LIBRARY_PNG) { throw missing }
    var output: UnsafeMutablePointer<UInt8>?
    var size = 0
    guard
      cimg_encode_png(image.pixels, Int32(image.width), Int32(image.height), &output, &size) == 0,
      let output
    else { throw ImageRejection(.damaged, .cannotEncodePreview) }
    defer { cimg_free(output) }
    return Array(UnsafeBufferPointer(start: output, count: size))
  }
}

/// Escape sequences of terminals that draw real images.
enum InlineImage {
  /// kitty takes its payload in chunks of at most 4096 base64 bytes.
  private static let kittyChunk = 4096

  /// kitty graphics protocol: transmit and display a PNG (f=100) over `columns` cells, the rows
  /// following from its shape; q=2 keeps kitty from answering on our input.
  static func kitty(png: [UInt8], columns: Int) -> String {
    let payload = Array(Data(png).base64EncodedString().utf8)
    var output = ""
    for start in stride(from: 0, to: payload.count, by: kittyChunk) {
      let end = min(start + kittyChunk, payload.count)
      let more = end < payload.count ? 1 : 0
      let keys = start == 0 ? "a=T,f=100,q=2,c=\(columns),m=\(more)" : "m=\(more)"
      output +=
        "\u{1B}_G\(keys);" + String(decoding: payload[start..<end], as: UTF8.self)
        + "\u{1B}\\"
    }
    return output
  }

  /// iTerm2's OSC 1337 inline file, fitted within `columns`×`rows` cells keeping its shape.
  static func iterm(png: [UInt8], columns: Int, rows: Int) -> String {
    "\u{1B}]1337;File=size=\(png.count);width=\(columns);height=\(rows);"
      + "preserveAspectRatio=1;inline=1:\(Data(png).base64EncodedString())\u{07}"
  }
}
