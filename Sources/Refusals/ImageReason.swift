/// Why a file cannot be attached or shown as a picture (`ImageRejection`), with its arguments.
/// Never names the path: the caller puts it in front.
public enum ImageReason: Sendable, Equatable {
  case noFileName, empty, noSuchFile, permissionDenied, pathNotDirectory, directory
  case notRegularFile(what: String?)
  case overLimit(size: Int?, limit: Int)
  case notAnImage
  /// An accepted format cut short.
  case truncated(format: String, flaw: ImageFlaw?)
  /// An accepted format, corrupt.
  case damaged(format: String, flaw: ImageFlaw)
  /// Well-formed, but not what the board stores.
  case unsupported(format: String, flaw: ImageFlaw)
  /// The picture (or frame `frame`, from 1) is over the size a picture may have.
  case tooLarge(
    format: String, frame: Int?, width: Int, height: Int, maximumSide: Int, maximumMegapixels: Int)
  /// Every frame together is over the pixels a picture may have.
  case framesTooLarge(format: String, megapixels: Int, frames: Int, maximumMegapixels: Int)
  case tooManyScans(format: String, scans: Int, maximum: Int)
  /// Decoding a `width`×`height` picture would buffer `megabytes` for `what` (coefficients,
  /// pixels, an alpha plane).
  case tooMuchMemory(
    format: String, megabytes: Int, width: Int, height: Int, what: String, maximumMegabytes: Int)
  /// The system library refused the bytes; `detail` is its own message.
  case cannotDecode(format: String, detail: String)
  /// A system error reading the file (`strerror`'s words).
  case system(String)
  /// A picture decoded, but its preview could not be made into a PNG for the terminal.
  case cannotEncodePreview

  public var wording: Wording {
    switch self {
    case .noFileName: return Wording("no file name given", "ファイル名がありません")
    case .empty: return Wording("is empty", "空のファイルです")
    case .noSuchFile: return Wording("no such file", "ファイルがありません")
    case .permissionDenied: return Wording("permission denied", "読む権限がありません")
    case .pathNotDirectory:
      return Wording("a part of the path is not a directory", "パスの途中がディレクトリではありません")
    case .directory: return Wording("is a directory", "ディレクトリです")
    case .notRegularFile(let what):
      return Wording("is not a regular file" + (what.map { " (a \($0))" } ?? ""), "通常のファイルではありません")
    case .overLimit(let size, let limit):
      let (shown, limit) = (size.map(ImageReason.formatSize), ImageReason.formatSize(limit))
      return Wording(
        (shown.map { "is \($0), " } ?? "") + "larger than the \(limit) limit",
        (shown.map { "\($0) で、" } ?? "") + "上限の \(limit) を超えています")
    case .notAnImage:
      return Wording(
        "not an image (PNG, JPEG, GIF or WebP expected)", "画像ではありません (PNG、JPEG、GIF、WebP のどれか)")
    // The container's and the library's own terms (a chunk, a marker) stay as they are named.
    case .truncated(let format, let flaw):
      return Wording(
        "truncated \(format)" + (flaw.map { " (\($0.wording.english))" } ?? ""),
        "\(format) が途中で切れています" + (flaw.map { " (\($0.wording.japanese))" } ?? ""))
    case .damaged(let format, let flaw):
      return Wording(
        "damaged \(format) (\(flaw.wording.english))",
        "\(format) が壊れています (\(flaw.wording.japanese))")
    case .unsupported(let format, let flaw):
      return Wording(
        "unsupported \(format) (\(flaw.wording.english))",
        "この \(format) には対応していません (\(flaw.wording.japanese))")
    case .tooLarge(let format, let frame, let width, let height, let side, let megapixels):
      return Wording(
        (frame.map { "\(format) frame \($0)" } ?? "\(format) image")
          + " too large (\(width)×\(height) pixels; at most \(side) a side and "
          + "\(megapixels) megapixels)",
        (frame.map { "\(format) の \($0) フレーム目" } ?? "\(format) の画像") + "が大きすぎます ("
          + "\(width)×\(height) ピクセル、上限は一辺 \(side)、\(megapixels) メガピクセル)")
    case .framesTooLarge(let format, let megapixels, let frames, let maximum):
      return Wording(
        "\(format) frames too large together (\(megapixels) megapixels in \(frames) frames; "
          + "at most \(maximum))",
        "\(format) のフレームが合わせて大きすぎます (\(frames) フレームで \(megapixels) メガピクセル、"
          + "上限は \(maximum))")
    case .tooManyScans(let format, let scans, let maximum):
      return Wording(
        "\(format) has too many scans (\(scans); at most \(maximum))",
        "\(format) のスキャンが多すぎます (\(scans)、上限は \(maximum))")
    case .tooMuchMemory(let format, let megabytes, let width, let height, let what, let maximum):
      return Wording(
        "\(format) needs too much memory to decode (\(megabytes) MB for "
          + "\(width)×\(height) \(what); at most \(maximum) MB)",
        "\(format) の復号に必要なメモリが多すぎます (\(megabytes) MB、上限は \(maximum) MB)")
    case .cannotDecode(let format, let detail):
      return Wording(
        "cannot decode \(format): \(detail)", "\(format) を復号できません (ライブラリの報告: \(detail))")
    case .system(let message):
      return Wording(message.prefix(1).lowercased() + message.dropFirst(), "読めません (\(message))")
    case .cannotEncodePreview:
      return Wording("cannot encode the preview as PNG", "プレビューを PNG にできません")
    }
  }

  /// `512 B`, `12 KB`, `4.8 MB`.
  public static func formatSize(_ bytes: Int) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    if bytes < 1024 * 1024 { return "\((bytes + 512) / 1024) KB" }
    let tenths = (bytes * 10 + 512 * 1024) / (1024 * 1024)
    return tenths % 10 == 0 ? "\(tenths / 10) MB" : "\(tenths / 10).\(tenths % 10) MB"
  }
}

/// What is wrong inside a picture's container; chunk and marker names are the format's own.
public enum ImageFlaw: Equatable, Sendable, CustomStringConvertible {
  /// A chunk (of this type, when known) runs past the end of the file.
  case chunkPastEnd(String?)
  case riffSizePastEnd, noTrailer, noEndOfImage, segmentPastEnd
  case unknownFirstChunk
  /// A WebP `VP8 `/`VP8L`/`VP8X` header that cannot be read.
  case badHeader(String)
  case badFrameHeader, invalidChunkType, noImageData, noWidthOrHeight
  /// PNG: IHDR is not the first chunk.
  case headerNotFirst
  case badChecksum(String)
  case secondHeader, secondStartOfImage, unknownBlock, noHeader, noPalette, badSegmentLength
  case secondFrameHeader, scanBeforeFrameHeader, badImageHeader
  /// JPEG samples of this many bits (8 expected).
  case sampleBits(Int)
  case heightAfterScan, losslessOrHierarchical

  public var wording: Wording {
    switch self {
    case .chunkPastEnd(let type):
      return Wording(
        (type.map { "\($0) " } ?? "") + "chunk runs past the end of the file",
        (type.map { "\($0) " } ?? "") + "チャンクがファイルの終わりを越えています")
    case .riffSizePastEnd:
      return Wording(
        "RIFF size exceeds the file",
        "RIFF のサイズがファイルより大きい")
    case .noTrailer:
      return Wording(
        "no trailer",
        "終端がありません")
    case .noEndOfImage:
      return Wording(
        "no end-of-image marker",
        "画像の終わりのマーカーがありません")
    case .segmentPastEnd:
      return Wording(
        "segment runs past the end of the file",
        "セグメントがファイルの終わりを越えています")
    case .unknownFirstChunk:
      return Wording(
        "unknown first chunk",
        "最初のチャンクが不明です")
    case .badHeader(let fourCC):
      return Wording(
        "bad \(fourCC) header",
        "\(fourCC) ヘッダーが読めません")
    case .badFrameHeader:
      return Wording(
        "bad frame header",
        "フレームヘッダーが読めません")
    case .invalidChunkType:
      return Wording(
        "invalid chunk type",
        "チャンクの種類が正しくありません")
    case .noImageData:
      return Wording(
        "no image data",
        "画像データがありません")
    case .noWidthOrHeight:
      return Wording(
        "no width or height",
        "幅か高さがありません")
    case .headerNotFirst:
      return Wording(
        "IHDR is not the first chunk",
        "IHDR が最初のチャンクではありません")
    case .badChecksum(let type):
      return Wording(
        "bad checksum in \(type) chunk",
        "\(type) チャンクのチェックサムが合いません")
    case .secondHeader:
      return Wording(
        "second IHDR chunk",
        "IHDR チャンクが 2 つあります")
    case .secondStartOfImage:
      return Wording(
        "second start-of-image marker",
        "画像の始まりのマーカーが 2 つあります")
    case .unknownBlock:
      return Wording(
        "unknown block",
        "不明なブロックがあります")
    case .noHeader:
      return Wording(
        "no IHDR chunk",
        "IHDR チャンクがありません")
    case .noPalette:
      return Wording(
        "palette image without a palette",
        "パレット画像にパレットがありません")
    case .badSegmentLength:
      return Wording(
        "bad segment length",
        "セグメントの長さが正しくありません")
    case .secondFrameHeader:
      return Wording(
        "second frame header",
        "フレームヘッダーが 2 つあります")
    case .scanBeforeFrameHeader:
      return Wording(
        "scan before frame header",
        "フレームヘッダーの前にスキャンがあります")
    case .badImageHeader:
      return Wording(
        "bad IHDR chunk",
        "IHDR チャンクが読めません")
    case .sampleBits(let bits):
      return Wording(
        "\(bits)-bit samples; 8-bit expected",
        "\(bits) ビットのサンプル (8 ビットのみ)")
    case .heightAfterScan:
      return Wording(
        "height given after the scan",
        "高さがスキャンの後にあります")
    case .losslessOrHierarchical:
      return Wording(
        "lossless or hierarchical coding",
        "ロスレスまたは階層符号化")
    }
  }

  public var description: String { wording.english }
}
