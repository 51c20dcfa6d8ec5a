/// Progressive greyscale JPEGs written byte by byte: every coefficient is zero, so each scan is a
/// handful of end-of-band runs, yet a decoder walks every block of the picture once per scan.
public enum JPEGImages {
  /// The scan bomb: 10000×10000 with 1000 scans, about 300 KB.
  public static func scanBomb() -> [UInt8] {
    progressive(width: 10000, height: 10000, scans: 1000)
  }

  /// `scans` scans (at least 1): the DC scan, then AC scans in a valid successive-approximation
  /// order (at most 882 of them, 14 per coefficient). Past 883 the last scan repeats, which is a
  /// bogus progression. `bogus` repeats the first AC scan from the start instead.
  public static func progressive(width: Int, height: Int, scans: Int, bogus: Bool = false)
    -> [UInt8]
  {
    var bytes: [UInt8] = [0xFF, 0xD8]
    segment(&bytes, 0xDB, [0] + [UInt8](repeating: 1, count: 64))  // quantisation table 0
    var frame: [UInt8] = [8]
    frame.appendBE(height, 2)
    frame.appendBE(width, 2)
    frame += [1, 1, 0x11, 0]  // one component, id 1, no subsampling, table 0
    segment(&bytes, 0xC2, frame)
    // DC table 0: one code "0" for category 0 (no difference).
    segment(&bytes, 0xC4, [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0])
    // AC table 0: 4-bit codes for EOBRUN symbols r<<4 (r = 0...14): runs of 2^r plus r bits.
    segment(
      &bytes, 0xC4,
      [0x10, 0, 0, 0, 15] + [UInt8](repeating: 0, count: 12) + (0..<15).map { UInt8($0 << 4) })
    let blocks = ((width + 7) / 8) * ((height + 7) / 8)

    // The DC scan: one "0" bit per block.
    bytes += scanHeader(start: 0, end: 0, high: 0, low: 0)
    var dc = BitWriter(.msbFirst, stuffJPEG: true)
    for _ in 0..<blocks / 32 { dc.write(0, 32) }
    dc.write(0, blocks % 32)
    dc.flush()
    bytes += dc.bytes

    var order: [(k: Int, high: Int, low: Int)] = []
    for k in 1...63 {
      order.append((k, 0, 13))
      for low in stride(from: 12, through: 0, by: -1) { order.append((k, low + 1, low)) }
    }
    for index in 0..<(scans - 1) {
      let scan = bogus ? order[0] : order[min(index, order.count - 1)]
      bytes += scanHeader(start: scan.k, end: scan.k, high: scan.high, low: scan.low)
      var ac = BitWriter(.msbFirst, stuffJPEG: true)
      var left = blocks
      while left > 0 {
        let run = min(left, 32767)
        let r = Int.bitWidth - 1 - run.leadingZeroBitCount
        ac.write(r, 4)
        ac.write(run - (1 << r), r)
        left -= run
      }
      ac.flush()
      bytes += ac.bytes
    }
    return bytes + [0xFF, 0xD9]
  }

  private static func scanHeader(start: Int, end: Int, high: Int, low: Int) -> [UInt8] {
    var header: [UInt8] = []
    segment(&header, 0xDA, [1, 1, 0x00, UInt8(start), UInt8(end), UInt8(high << 4 | low)])
    return header
  }

  private static func segment(_ bytes: inout [UInt8], _ marker: UInt8, _ payload: [UInt8]) {
    bytes += [0xFF, marker]
    bytes.appendBE(payload.count + 2, 2)
    bytes += payload
  }
}
