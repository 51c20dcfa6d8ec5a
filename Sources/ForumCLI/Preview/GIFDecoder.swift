import CImageDecode
import Forum

/// The first frame of a GIF, for previews. LZW-decoded here and fed row by row into the same
/// shrinker the C decoders use, so even a large canvas is never held whole. Damaged data ends
/// the frame early (the rest stays transparent), the way browsers show such files.
enum GIFDecoder {
  private static let interlacePasses: [(start: Int, step: Int)] = [(0, 8), (4, 8), (2, 4), (1, 2)]

  private struct Frame {
    var x = 0
    var y = 0
    var width = 0
    var height = 0
    var interlaced = false
    var palette: [UInt8] = []
    var transparentIndex: Int?
    var minimumCodeSize = 0
    var data: [UInt8] = []
  }

  static func firstFrame(_ b: [UInt8], maxWidth: Int, maxHeight: Int) throws -> RGBAImage {
    guard b.count >= 13 else { throw failure("file too short") }
    let frame = try locateFirstFrame(b)
    var canvas = (width: Int(b[6]) | Int(b[7]) << 8, height: Int(b[8]) | Int(b[9]) << 8)
    if canvas.width == 0 || canvas.height == 0 { canvas = (frame.width, frame.height) }
    guard canvas.width > 0, canvas.height > 0 else { throw failure("empty picture") }
    guard (1...8).contains(frame.minimumCodeSize) else { throw failure("bad LZW code size") }

    let target = RGBAImage.fit(
      width: canvas.width, height: canvas.height, maxWidth: maxWidth, maxHeight: maxHeight,
      enlarge: false)
    guard
      let resampler = cimg_resampler_create(
        Int32(canvas.width), Int32(canvas.height), Int32(target.width), Int32(target.height))
    else { throw failure("out of memory") }
    defer { cimg_resampler_free(resampler) }

    var row = [UInt8](repeating: 0, count: frame.width * 4)
    var column = 0
    var rowIndex = 0
    let visible = min(frame.width, canvas.width - frame.x)
    // An empty frame leaves the canvas transparent.
    let rowCount = frame.width > 0 ? frame.height : 0
    decodeLZW(frame.data, minimumCodeSize: frame.minimumCodeSize) { index in
      guard rowIndex < rowCount else { return false }
      let at = column * 4
      if frame.transparentIndex == Int(index) {
        row[at + 3] = 0
      } else {
        let entry = Int(index) * 3
        let color = entry + 2 < frame.palette.count ? frame.palette[entry..<entry + 3] : [0, 0, 0]
        row.replaceSubrange(at..<at + 3, with: color)
        row[at + 3] = 255
      }
      column += 1
      guard column == frame.width else { return true }
      let y = frame.y + rowPosition(rowIndex, height: frame.height, interlaced: frame.interlaced)
      if visible > 0 && y < canvas.height {
        cimg_resampler_add(resampler, Int32(y), Int32(frame.x), 1, row, Int32(visible))
      }
      column = 0
      rowIndex += 1
      return rowIndex < rowCount
    }

    var result = cimg_image()
    defer { cimg_image_free(&result) }
    guard cimg_resampler_finish(resampler, &result) == 0, let pixels = result.pixels else {
      throw failure(ImageDecoder.message(of: &result))
    }
    return RGBAImage(
      width: Int(result.width), height: Int(result.height),
      pixels: Array(UnsafeBufferPointer(start: pixels, count: target.width * target.height * 4)))
  }

  /// Walks the blocks up to the first image, remembering its colour table and transparency.
  private static func locateFirstFrame(_ b: [UInt8]) throws -> Frame {
    var frame = Frame()
    var pos = 13
    frame.palette = colorTable(b, flags: b[10], at: &pos)
    while pos + 1 < b.count {
      switch b[pos] {
      case 0x21:
        // A graphic control extension (F9, 4 bytes) may name a transparent colour.
        if b[pos + 1] == 0xF9, pos + 6 < b.count, b[pos + 2] == 4 {
          frame.transparentIndex = b[pos + 3] & 1 == 1 ? Int(b[pos + 6]) : nil
        }
        pos = subBlocks(b, from: pos + 2).end
      case 0x2C where pos + 10 < b.count:
        let field = { (offset: Int) in Int(b[pos + offset]) | Int(b[pos + offset + 1]) << 8 }
        (frame.x, frame.y, frame.width, frame.height) = (field(1), field(3), field(5), field(7))
        let flags = b[pos + 9]
        frame.interlaced = flags & 0x40 != 0
        pos += 10
        let local = colorTable(b, flags: flags, at: &pos)
        if !local.isEmpty { frame.palette = local }
        guard pos < b.count else { throw failure("file ends too early") }
        frame.minimumCodeSize = Int(b[pos])
        frame.data = subBlocks(b, from: pos + 1).data
        return frame
      default:
        throw failure("no image data")
      }
    }
    throw failure("no image data")
  }

  /// The colour table a flags byte announces (empty when none), advancing `pos` past it.
  private static func colorTable(_ b: [UInt8], flags: UInt8, at pos: inout Int) -> [UInt8] {
    guard flags & 0x80 != 0 else { return [] }
    let end = min(pos + (3 << (Int(flags & 0x07) + 1)), b.count)
    defer { pos = end }
    return Array(b[pos..<end])
  }

  /// The concatenated contents of a chain of sub-blocks and the position after it.
  private static func subBlocks(_ b: [UInt8], from start: Int) -> (data: [UInt8], end: Int) {
    var data = [UInt8]()
    var pos = start
    while pos < b.count {
      let size = Int(b[pos])
      pos += 1
      if size == 0 { break }
      data += b[pos..<min(pos + size, b.count)]
      pos += size
    }
    return (data, min(pos, b.count))
  }

  /// Which row of the frame the `index`th decoded row is: interlaced GIFs send every 8th row
  /// first, then fill in.
  private static func rowPosition(_ index: Int, height: Int, interlaced: Bool) -> Int {
    guard interlaced else { return index }
    var remaining = index
    for pass in interlacePasses {
      let rows = height > pass.start ? (height - pass.start + pass.step - 1) / pass.step : 0
      if remaining < rows { return pass.start + remaining * pass.step }
      remaining -= rows
    }
    return height
  }

  /// GIF's variable-width LZW: codes from `minimumCodeSize + 1` up to 12 bits, least significant
  /// bit first. `emit` gets each colour index and returns false once it wants no more.
  private static func decodeLZW(
    _ data: [UInt8], minimumCodeSize: Int, emit: (UInt8) -> Bool
  ) {
    let clear = 1 << minimumCodeSize
    let end = clear + 1
    var prefix = [Int](repeating: 0, count: 4096)
    var suffix = [UInt8](repeating: 0, count: 4096)
    var first = [UInt8](repeating: 0, count: 4096)
    for code in 0..<clear {
      suffix[code] = UInt8(code)
      first[code] = UInt8(code)
    }
    var codeSize = minimumCodeSize + 1
    var next = clear + 2
    var previous: Int?
    var bits = 0
    var bitCount = 0
    var position = 0
    var string = [UInt8]()
    string.reserveCapacity(4096)
    while true {
      while bitCount < codeSize && position < data.count {
        bits |= Int(data[position]) << bitCount
        bitCount += 8
        position += 1
      }
      guard bitCount >= codeSize else { return }
      let code = bits & ((1 << codeSize) - 1)
      bits >>= codeSize
      bitCount -= codeSize

      if code == clear {
        (codeSize, next, previous) = (minimumCodeSize + 1, clear + 2, nil)
        continue
      }
      guard code != end else { return }
      guard let last = previous else {
        // The first code after a clear must be a plain colour index.
        guard code < clear, emit(UInt8(code)) else { return }
        previous = code
        continue
      }
      // A code may name an existing entry, or the one about to be made (string + its start).
      guard code <= next, code < 4096 else { return }
      string.removeAll(keepingCapacity: true)
      var walk = code
      if code == next {
        string.append(first[last])
        walk = last
      }
      while walk >= clear {
        string.append(suffix[walk])
        walk = prefix[walk]
      }
      string.append(UInt8(walk))
      for index in string.reversed() {
        guard emit(index) else { return }
      }
      if next < 4096 {
        prefix[next] = last
        suffix[next] = string.last!
        first[next] = first[last]
        next += 1
        if next == 1 << codeSize && codeSize < 12 { codeSize += 1 }
      }
      previous = code
    }
  }

  private static func failure(_ detail: String) -> ImageRejection {
    ImageRejection(.damaged, "cannot decode GIF: \(detail)")
  }
}
