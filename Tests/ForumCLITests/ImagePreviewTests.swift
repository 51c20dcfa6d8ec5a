import Foundation
import HostileImages
import Testing

@testable import Forum
@testable import ForumCLI

/// The public image corpus under Fixtures/corpus, found from this file's own path.
private enum Corpus {
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/corpus")

  static func names(_ folder: String) -> [String] {
    let names = try? FileManager.default.contentsOfDirectory(
      atPath: root.appendingPathComponent(folder).path)
    return (names ?? []).filter { $0.hasSuffix(".png") }.sorted().map { folder + "/" + $0 }
  }

  static func data(_ path: String) throws -> Data {
    try Data(contentsOf: root.appendingPathComponent(path))
  }

  static func prepared(_ path: String) throws -> PreparedImage {
    try ImagePreparer.prepare(try data(path))
  }
}

private let allModes: [ImageRenderMode] = [.trueColorBlocks, .paletteBlocks, .kitty, .iterm]

/// What is left of rendered output once the escape sequences we emit are taken out: it must
/// hold no control character a terminal would act on.
private func strayControls(_ output: String) throws -> [Unicode.Scalar] {
  let ours = try Regex(
    "\u{1B}\\[[0-9;]*m|\u{1B}_G[A-Za-z0-9=,]+;[A-Za-z0-9+/=]*\u{1B}\\\\"
      + "|\u{1B}\\]1337;File=[A-Za-z0-9=;]+:[A-Za-z0-9+/=]*\u{07}")
  return output.replacing(ours, with: "").unicodeScalars.filter {
    ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
  }
}

/// A GIF from colour indices, LZW-encoded the standard way (table growth, 12-bit limit).
private func gif(
  width: Int, height: Int, palette: [UInt8], indices: [UInt8], interlaced: Bool = false,
  transparent: UInt8? = nil
) -> Data {
  let tableBits = (1...8).first { 3 << $0 >= palette.count } ?? 8
  var bytes = Array("GIF89a".utf8)
  bytes += [UInt8(width & 0xFF), UInt8(width >> 8), UInt8(height & 0xFF), UInt8(height >> 8)]
  bytes += [0x80 | UInt8(tableBits - 1), 0, 0]
  bytes += palette + [UInt8](repeating: 0, count: (3 << tableBits) - palette.count)
  if let transparent { bytes += [0x21, 0xF9, 4, 1, 0, 0, transparent, 0] }
  bytes += [0x2C, 0, 0, 0, 0, UInt8(width & 0xFF), UInt8(width >> 8)]
  bytes += [UInt8(height & 0xFF), UInt8(height >> 8), interlaced ? 0x40 : 0]
  let minimumCodeSize = max(2, tableBits)
  let data = lzw(indices, minimumCodeSize: minimumCodeSize)
  bytes.append(UInt8(minimumCodeSize))
  for start in stride(from: 0, to: data.count, by: 255) {
    let block = data[start..<min(start + 255, data.count)]
    bytes += [UInt8(block.count)] + block
  }
  return Data(bytes + [0, 0x3B])
}

private func lzw(_ indices: [UInt8], minimumCodeSize: Int) -> [UInt8] {
  let clear = 1 << minimumCodeSize
  var output = [UInt8]()
  var bits = 0
  var bitCount = 0
  var codeSize = minimumCodeSize + 1
  func write(_ code: Int) {
    bits |= code << bitCount
    bitCount += codeSize
    while bitCount >= 8 {
      output.append(UInt8(bits & 0xFF))
      bits >>= 8
      bitCount -= 8
    }
  }
  var table: [[UInt8]: Int] = [:]
  var next = clear + 2
  write(clear)
  var current: [UInt8] = []
  for index in indices {
    let extended = current + [index]
    if current.isEmpty || table[extended] != nil {
      current = extended
      continue
    }
    write(current.count == 1 ? Int(current[0]) : table[current]!)
    if next == 4096 {
      write(clear)
      (table, next, codeSize) = ([:], clear + 2, minimumCodeSize + 1)
    } else {
      table[extended] = next
      if next == 1 << codeSize { codeSize += 1 }
      next += 1
    }
    current = [index]
  }
  write(current.count == 1 ? Int(current[0]) : table[current]!)
  write(clear + 1)
  if bitCount > 0 { output.append(UInt8(bits & 0xFF)) }
  return output
}

@Suite struct ImageDecoderTests {
  @Test func everyPngSuiteFileAndBaselineJpegDecodesAndDraws() throws {
    let paths = Corpus.names("png/suite") + ["jpeg/testorig.jpg", "jpeg/testimgint.jpg"]
    #expect(paths.count == 53)
    for path in paths {
      let image = try Corpus.prepared(path)
      try ImageDecoder.verify(image)
      let full = try ImageDecoder.decode(image, maxWidth: 1000, maxHeight: 1000)
      #expect((full.width, full.height) == (image.width, image.height), "\(path)")
      #expect(full.pixels.count == image.width * image.height * 4)
      for mode in allModes {
        let lines = try ImagePreview.lines(
          image, mode: mode, box: PreviewBox(columns: 28, rows: 14))
        #expect(!lines.isEmpty && lines.allSatisfy { !$0.isEmpty }, "\(path) \(mode)")
        #expect(try strayControls(lines.joined(separator: "\n")).isEmpty, "\(path) \(mode)")
      }
    }
  }

  @Test func interlacedPngsDecodeLikeTheirPlainTwins() throws {
    let interlaced = Corpus.names("png/suite").filter { $0.hasPrefix("png/suite/i") }
    #expect(interlaced.count == 21)
    for path in interlaced {
      let plain = path.replacingOccurrences(of: "png/suite/i", with: "png/suite/")
      for size in [32, 11] {
        let a = try ImageDecoder.decode(try Corpus.prepared(path), maxWidth: size, maxHeight: size)
        let b = try ImageDecoder.decode(try Corpus.prepared(plain), maxWidth: size, maxHeight: size)
        #expect(a == b, "\(path) at \(size)")
      }
    }
  }

  @Test func shrinkingAveragesPixels() throws {
    let image = try Corpus.prepared("png/suite/basn2c08.png")
    let full = try ImageDecoder.decode(image, maxWidth: 32, maxHeight: 32)
    let half = try ImageDecoder.decode(image, maxWidth: 16, maxHeight: 16)
    #expect((half.width, half.height) == (16, 16))
    for (x, y) in [(0, 0), (7, 3), (15, 15)] {
      for channel in 0..<3 {
        let sources = [(0, 0), (1, 0), (0, 1), (1, 1)].map { dx, dy in
          Int(full.pixels[((2 * y + dy) * 32 + 2 * x + dx) * 4 + channel])
        }
        let average = (sources.reduce(0, +) + 2) / 4
        #expect(abs(Int(half.pixels[(y * 16 + x) * 4 + channel]) - average) <= 1)
      }
    }
  }

  @Test func transparencyIsKept() throws {
    let image = try ImageDecoder.decode(
      try Corpus.prepared("png/suite/ftbbn0g04.png"), maxWidth: 32, maxHeight: 32)
    let alphas = Set(stride(from: 3, to: image.pixels.count, by: 4).map { image.pixels[$0] })
    #expect(alphas == [0, 255])
  }

  @Test func jpegsShrinkWhileDecoding() throws {
    let image = try Corpus.prepared("jpeg/testorig.jpg")
    let small = try ImageDecoder.decode(image, maxWidth: 30, maxHeight: 30)
    #expect((small.width, small.height) == (30, 20))
    let other = try ImageDecoder.decode(
      try Corpus.prepared("jpeg/testimgint.jpg"), maxWidth: 30, maxHeight: 30)
    // Same picture, different encoder settings: close, pixel for pixel.
    let difference = zip(small.pixels, other.pixels).map { abs(Int($0) - Int($1)) }
    #expect(difference.reduce(0, +) / difference.count < 6)
  }

  @Test func twelveBitJpegFailsCleanly() throws {
    let data = try Corpus.data("jpeg/monkey12.jpg")
    // Stored bytes are checked like new ones before a decoder sees them.
    let failure = ImageRejection(.unsupported, "unsupported JPEG (12-bit samples; 8-bit expected)")
    #expect(throws: failure) {
      try ImageDecoder.decode(data, format: .jpeg, maxWidth: 32, maxHeight: 32)
    }
    let unchecked = PreparedImage(
      format: .jpeg, width: 1, height: 1, orientation: 1, data: data, removedMetadata: [])
    #expect(throws: failure) { try ImageDecoder.verify(unchecked) }
  }

  @Test func arithmeticJpegDecodesOrFailsCleanly() throws {
    let image = try Corpus.prepared("jpeg/testimgari.jpg")
    do {
      let pixels = try ImageDecoder.decode(image, maxWidth: 64, maxHeight: 64)
      #expect((pixels.width, pixels.height) == (64, 42))
    } catch let error as ImageRejection {
      #expect(error.reason.hasPrefix("cannot decode JPEG: "))
    }
  }

  @Test func crashersAndBadPalettesDecodeOrFailCleanly() throws {
    var outcomes: [String: String] = [:]
    for path in Corpus.names("png/crashers") + Corpus.names("png/badpal") {
      do {
        let image = try Corpus.prepared(path)
        try ImageDecoder.verify(image)
        for mode in allModes {
          let lines = try ImagePreview.lines(
            image, mode: mode, box: PreviewBox(columns: 8, rows: 4))
          #expect(try strayControls(lines.joined()).isEmpty)
        }
        outcomes[path] = "ok"
      } catch let error as ImageRejection {
        #expect(!error.reason.isEmpty && !error.reason.contains("\n"))
        outcomes[path] = error.reason
      }
    }
    #expect(outcomes.count == 32)
    #expect(outcomes["png/badpal/test-palette-8.png"] == "ok")
    #expect(outcomes["png/crashers/badadler.png"]?.hasPrefix("cannot decode PNG: ") == true)
  }

  @Test func damagedBytesNeverReachACrash() throws {
    let palette: [UInt8] = (0..<16).flatMap { [UInt8($0 * 16), 0, 0] }
    let noise = gif(
      width: 40, height: 30, palette: palette, indices: (0..<1200).map { UInt8($0 % 13) })
    // The same with a frame 0 pixels wide (its descriptor follows the 13-byte header and the
    // 48-byte colour table) on a 40×30 canvas.
    var emptyFrame = [UInt8](noise)
    emptyFrame.replaceSubrange(66..<68, with: [0, 0])
    let samples: [(Data, ImageFormat)] = [
      (try Corpus.data("png/suite/basn6a16.png"), .png),
      (try Corpus.data("jpeg/testorig.jpg"), .jpeg),
      (noise, .gif),
      (Data(emptyFrame), .gif),
    ]
    for (original, format) in samples {
      let data = [UInt8](original)
      for length in stride(from: 0, to: data.count, by: max(1, data.count / 40)) {
        _ = try? ImageDecoder.decode(
          Data(data[..<length]), format: format, maxWidth: 16, maxHeight: 16)
      }
      // Bytes changed at spread-out places, the same ones on every run.
      for round in 0..<50 {
        var changed = data
        for k in 1...3 {
          changed[(round * 7919 + k * 104_729) % data.count] = UInt8((round * 31 + k * 17) & 0xFF)
        }
        _ = try? ImageDecoder.decode(Data(changed), format: format, maxWidth: 16, maxHeight: 16)
      }
    }
    let empty = try ImageDecoder.decode(Data(emptyFrame), format: .gif, maxWidth: 40, maxHeight: 30)
    #expect((empty.width, empty.height) == (40, 30))
    #expect(stride(from: 3, to: empty.pixels.count, by: 4).allSatisfy { empty.pixels[$0] == 0 })
    #expect(throws: ImageRejection.self) {
      try ImageDecoder.decode(Data("not a png".utf8), format: .png, maxWidth: 8, maxHeight: 8)
    }
  }

  @Test func orientationTurnsThePicture() throws {
    // 3×2: pixel values 0...5 in reading order, in the red channel.
    let image = RGBAImage(width: 3, height: 2, pixels: (0..<6).flatMap { [UInt8($0), 0, 0, 255] })
    func reds(_ turned: RGBAImage) -> [UInt8] {
      stride(from: 0, to: turned.pixels.count, by: 4).map { turned.pixels[$0] }
    }
    #expect(reds(image.oriented(1)) == [0, 1, 2, 3, 4, 5])
    #expect(reds(image.oriented(2)) == [2, 1, 0, 5, 4, 3])
    #expect(reds(image.oriented(3)) == [5, 4, 3, 2, 1, 0])
    #expect(reds(image.oriented(4)) == [3, 4, 5, 0, 1, 2])
    #expect(reds(image.oriented(5)) == [0, 3, 1, 4, 2, 5])
    #expect(reds(image.oriented(6)) == [3, 0, 4, 1, 5, 2])
    #expect(reds(image.oriented(7)) == [5, 2, 4, 1, 3, 0])
    #expect(reds(image.oriented(8)) == [2, 5, 1, 4, 0, 3])
    #expect((image.oriented(6).width, image.oriented(6).height) == (2, 3))
  }

  @Test func turnedJpegDecodesUpright() throws {
    // testorig.jpg with an Exif block saying "turn a quarter clockwise".
    var exif = Array("Exif\0\0MM\0*".utf8) + [0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1]
    exif += [0, 6, 0, 0, 0, 0, 0, 0]
    let original = [UInt8](try Corpus.data("jpeg/testorig.jpg"))
    let segment = [0xFF, 0xE1, 0, UInt8(exif.count + 2)] + exif
    let image = try ImagePreparer.prepare(Data(original[..<2] + segment + original[2...]))
    #expect(image.orientation == 6)
    let pixels = try ImageDecoder.decode(image, maxWidth: 1000, maxHeight: 1000)
    #expect((pixels.width, pixels.height) == (149, 227))
    let thumb = try ImageDecoder.decode(image, maxWidth: 20, maxHeight: 100)
    #expect((thumb.width, thumb.height) == (20, 30))
  }

  @Test func gifFirstFrameDecodes() throws {
    let palette: [UInt8] = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]
    let indices = (0..<6).map { UInt8($0 % 4) }
    let image = try ImagePreparer.prepare(
      gif(width: 3, height: 2, palette: palette, indices: indices))
    let pixels = try ImageDecoder.decode(image, maxWidth: 10, maxHeight: 10)
    #expect((pixels.width, pixels.height) == (3, 2))
    #expect(Array(pixels.pixels[4..<12]) == [255, 0, 0, 255, 0, 255, 0, 255])
    #expect(Array(pixels.pixels[12..<16]) == [0, 0, 255, 255])
  }

  @Test func gifLzwHandlesLongRunsAndFullTables() throws {
    // 256 colours over 300×300: long runs (codes naming the entry being made) and noise
    // (a table that fills up and is cleared).
    let palette: [UInt8] = (0..<256).flatMap { [UInt8($0), UInt8(255 - $0), 0] }
    var seed: UInt32 = 7
    let indices = (0..<90_000).map { i -> UInt8 in
      if i < 45_000 { return UInt8(i / 3000) }
      seed = seed &* 1_103_515_245 &+ 12345
      return UInt8(seed >> 24)
    }
    let image = try ImagePreparer.prepare(
      gif(width: 300, height: 300, palette: palette, indices: indices))
    let pixels = try ImageDecoder.decode(image, maxWidth: 300, maxHeight: 300)
    let decoded = stride(from: 0, to: pixels.pixels.count, by: 4).map { pixels.pixels[$0] }
    #expect(decoded == indices)
  }

  @Test func interlacedAndTransparentGif() throws {
    let palette: [UInt8] = [0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30]
    // Rows travel as 0, 2, 1, 3 (passes starting at 0, 4, 2 and 1); row 3 is transparent.
    let sent: [UInt8] = [0, 0, 2, 2, 1, 1, 3, 3]
    let image = try ImagePreparer.prepare(
      gif(width: 2, height: 4, palette: palette, indices: sent, interlaced: true, transparent: 3))
    let pixels = try ImageDecoder.decode(image, maxWidth: 2, maxHeight: 4)
    let firstColumn = (0..<4).map { pixels.pixel(x: 0, y: $0) }
    #expect(firstColumn.map(\.r) == [0, 10, 20, 0])
    #expect(firstColumn.map(\.a) == [255, 255, 255, 0])
  }

  @Test func webpDecodesThroughLibwebpAndAnimationsShowTheirFirstFrame() throws {
    let still = try ImagePreparer.prepare(Data(WebPImages.lossless(width: 40, height: 20)))
    let pixels = try ImageDecoder.decode(still, maxWidth: 10, maxHeight: 10)
    #expect((pixels.width, pixels.height) == (10, 5))
    #expect(pixels.pixel(x: 3, y: 2) == (40, 120, 200, 255))

    let animation = try ImagePreparer.prepare(
      Data(WebPImages.animation(canvas: (30, 20), frames: [(30, 20), (30, 20)])))
    let first = try ImageDecoder.decode(animation, maxWidth: 30, maxHeight: 20)
    #expect(first.pixel(x: 5, y: 5) == (200, 40, 40, 255))

    let damaged = PreparedImage(
      format: .webp, width: 1, height: 1, orientation: 1, data: Data("RIFF".utf8),
      removedMetadata: [])
    #expect(throws: ImageRejection.self) { try ImageDecoder.verify(damaged) }
  }
}

@Suite struct ImagePreviewTests {
  @Test func halfBlocksDrawTwoPixelsACell() {
    // One column: red over green, then a transparent pixel on the last, odd row.
    let image = RGBAImage(
      width: 1, height: 3, pixels: [255, 0, 0, 255, 0, 255, 0, 255, 9, 9, 9, 0])
    #expect(
      HalfBlocks.lines(image, trueColor: true, background: .black) == [
        "\u{1B}[38;2;255;0;0;48;2;0;255;0m▀\u{1B}[0m", "\u{1B}[49m \u{1B}[0m",
      ])
    #expect(
      HalfBlocks.lines(image, trueColor: false, background: .black) == [
        "\u{1B}[38;5;196;48;5;46m▀\u{1B}[0m", "\u{1B}[49m \u{1B}[0m",
      ])
    // Only the lower pixel drawn: the lower half block, on the terminal's background.
    let lower = RGBAImage(
      width: 2, height: 2, pixels: [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 255, 255, 0, 0, 255, 255])
    #expect(
      HalfBlocks.lines(lower, trueColor: true, background: .black) == [
        "\u{1B}[38;2;0;0;255;49m▄▄\u{1B}[0m"
      ])
  }

  @Test func halfTransparentPixelsBlendWithTheBackground() {
    let image = RGBAImage(width: 1, height: 1, pixels: [255, 255, 255, 128])
    #expect(
      HalfBlocks.lines(image, trueColor: true, background: .black)[0].contains("38;2;128;128;128"))
    #expect(
      HalfBlocks.lines(image, trueColor: true, background: .white)[0].contains("38;2;255;255;255"))
  }

  @Test func paletteColoursAreTheNearest() {
    #expect(HalfBlocks.paletteIndex(RGB(r: 255, g: 0, b: 0)) == 196)
    #expect(HalfBlocks.paletteIndex(RGB(r: 0, g: 255, b: 0)) == 46)
    #expect(HalfBlocks.paletteIndex(.white) == 231)
    #expect(HalfBlocks.paletteIndex(.black) == 16)
    #expect(HalfBlocks.paletteIndex(RGB(r: 128, g: 128, b: 128)) == 244)
  }

  @Test func previewFitsTheBox() throws {
    let photo = try Corpus.prepared("jpeg/testorig.jpg")
    let box = PreviewBox.thumbnail(terminalColumns: 80)
    #expect(box == PreviewBox(columns: 32, rows: 16))
    let lines = try ImagePreview.lines(photo, mode: .trueColorBlocks, box: box)
    // 227×149 into 32×32 half-block pixels: 32×21, so 11 rows of 32 cells.
    #expect(lines.count == 11)
    #expect(lines.allSatisfy { $0.filter { $0 == "▀" || $0 == "▄" || $0 == " " }.count == 32 })
    #expect(lines.allSatisfy { $0.hasSuffix("\u{1B}[0m") })

    // A 32×32 icon is enlarged to fill the box; a narrow terminal shrinks it.
    let icon = try Corpus.prepared("png/suite/basn2c08.png")
    #expect(try ImagePreview.lines(icon, mode: .paletteBlocks, box: box).count == 16)
    let narrow = PreviewBox.thumbnail(terminalColumns: 21)
    #expect(narrow == PreviewBox(columns: 20, rows: 10))
    #expect(try ImagePreview.lines(icon, mode: .paletteBlocks, box: narrow).count == 10)
    #expect(
      PreviewBox.full(terminalColumns: 100, terminalRows: 40) == PreviewBox(columns: 99, rows: 37))
  }

  @Test func kittySendsAChunkedPng() throws {
    let photo = try Corpus.prepared("jpeg/testorig.jpg")
    let output = try ImagePreview.lines(photo, mode: .kitty, box: PreviewBox(columns: 32, rows: 16))
    #expect(output.count == 1)
    let commands = output[0].components(separatedBy: "\u{1B}\\").dropLast()
    #expect(commands.count > 1)
    #expect(commands.first!.hasPrefix("\u{1B}_Ga=T,f=100,q=2,c=32,m=1;"))
    #expect(commands.last!.hasPrefix("\u{1B}_Gm=0;"))
    let payloads = commands.map { String($0[$0.index(after: $0.firstIndex(of: ";")!)...]) }
    #expect(payloads.allSatisfy { $0.utf8.count <= 4096 })
    let png = try #require(Data(base64Encoded: payloads.joined()))
    let sent = try ImagePreparer.prepare(png)
    // 32 cells of 10 pixels by 11 rows of 20 hold the whole 227×149 photo.
    #expect(sent.format == .png && (sent.width, sent.height) == (227, 149))
  }

  @Test func itermSendsAnInlineFile() throws {
    let icon = try Corpus.prepared("png/suite/basn6a08.png")
    let output = try ImagePreview.lines(icon, mode: .iterm, box: PreviewBox(columns: 20, rows: 10))
    let line = try #require(output.first)
    #expect(line.hasPrefix("\u{1B}]1337;File=size="))
    #expect(line.contains(";width=20;height=10;preserveAspectRatio=1;inline=1:"))
    #expect(line.hasSuffix("\u{07}"))
    let payload = line[
      line.index(after: line.firstIndex(of: ":")!)..<line.index(before: line.endIndex)]
    let png = try #require(Data(base64Encoded: String(payload)))
    #expect(line.contains("size=\(png.count);"))
    #expect(try ImagePreparer.prepare(png).width == 32)
  }

  @Test func textLineDescribesTheImage() {
    #expect(
      ImagePreview.textLine(
        name: "cat.png", format: .png, width: 640, height: 480, byteCount: 86_000)
        == "[image: cat.png 640×480 PNG 84 KB]")
    let hostile = ImagePreview.textLine(
      name: "\u{1B}[31mevil\u{202E}gnp.exe", format: .jpeg, width: 1, height: 1, byteCount: 10)
    #expect(!hostile.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })
  }

  @Test func placeholderIsASmallBubble() {
    let widths = Set(ImagePreview.placeholder.dropLast().map { SafeText.width($0) })
    #expect(widths.count == 1 && widths.first! <= 16)
  }

  @Test func autoDetectionFollowsTheEnvironment() {
    func mode(_ environment: [String: String], _ choice: ImageMode = .auto) -> ImageRenderMode? {
      choice.renderMode(environment: environment, isTerminal: true, colorEnabled: true)
    }
    #expect(mode(["KITTY_WINDOW_ID": "1"]) == .kitty)
    #expect(mode(["TERM": "xterm-kitty"]) == .kitty)
    #expect(mode(["TERM_PROGRAM": "iTerm.app"]) == .iterm)
    #expect(mode(["TERM_PROGRAM": "WezTerm"]) == .iterm)
    #expect(mode(["COLORTERM": "truecolor"]) == .trueColorBlocks)
    #expect(mode(["COLORTERM": "24bit", "TERM": "xterm"]) == .trueColorBlocks)
    #expect(mode(["TERM": "xterm-256color"]) == .paletteBlocks)
    #expect(mode(["KITTY_WINDOW_ID": "1", "TMUX": "/tmp/tmux-0/default,1,0"]) == .paletteBlocks)
    #expect(mode(["TERM": "xterm-kitty"], .none) == nil)
    #expect(mode(["TERM": "xterm-kitty"], .blocks) == .paletteBlocks)
    #expect(mode([:], .iterm) == .iterm)
    #expect(
      ImageMode.auto.renderMode(
        environment: ["TERM": "xterm-kitty"], isTerminal: false, colorEnabled: true) == nil)
    #expect(
      ImageMode.auto.renderMode(
        environment: ["COLORTERM": "truecolor"], isTerminal: true, colorEnabled: false) == nil)
    #expect(RGB.terminalBackground(environment: ["COLORFGBG": "0;15"]) == .white)
    #expect(RGB.terminalBackground(environment: ["COLORFGBG": "15;0"]) == .black)
  }
}
