import Foundation
import Testing

@testable import Forum

/// The public image corpus under Fixtures/corpus, found from this file's own path.
private enum Corpus {
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/corpus")

  static func files(_ folder: String) -> [URL] {
    let directory = root.appendingPathComponent(folder)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.hasSuffix(".png") }.sorted().map {
      directory.appendingPathComponent($0)
    }
  }

  static func data(_ path: String) throws -> Data {
    try Data(contentsOf: root.appendingPathComponent(path))
  }
}

/// An Exif block (TIFF, big-endian) with Make, Orientation and a GPS IFD holding a latitude.
private func exifWithGPS(orientation: Int) -> [UInt8] {
  // IFD0 at 8 with 3 entries (2 + 36 + 4 bytes) ends at 50; the Make string and the GPS IFD
  // follow. Each pair is a value and its size in bytes.
  let fields: [(Int, Int)] = [
    (8, 4), (3, 2),
    (0x010F, 2), (2, 2), (7, 4), (50, 4),  // Make: "Canon!\0" at 50
    (0x0112, 2), (3, 2), (1, 4), (orientation << 16, 4),  // Orientation, a SHORT
    (0x8825, 2), (4, 2), (1, 4), (57, 4),  // GPSInfo IFD at 57
    (0, 4),
  ]
  let gps: [(Int, Int)] = [
    (2, 2),
    (0x0001, 2), (2, 2), (2, 4), (0x4E00_0000, 4),  // LatitudeRef "N"
    (0x0002, 2), (5, 2), (3, 4), (87, 4),  // Latitude: 3 rationals at 87
    (0, 4),
    (35, 4), (1, 4), (41, 4), (1, 4), (2205, 4), (100, 4),
  ]
  var tiff = Array("MM\0*".utf8)
  for (value, size) in fields { tiff.appendBigEndian(value, size) }
  tiff += Array("Canon!\0".utf8)
  for (value, size) in gps { tiff.appendBigEndian(value, size) }
  return Array("Exif\0\0".utf8) + tiff
}

private func jpegSegment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
  [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
}

/// `original` with `segments` inserted right after SOI and APP0, where cameras put them.
private func jpeg(_ original: Data, inserting segments: [UInt8]) -> Data {
  let bytes = [UInt8](original)
  let app0End = bytes[2...3] == [0xFF, 0xE0] ? 4 + (Int(bytes[4]) << 8 | Int(bytes[5])) : 2
  return Data(bytes[..<app0End] + segments + bytes[app0End...])
}

/// `original` with `chunks` inserted right after IHDR (which ends at byte 33).
private func png(_ original: Data, inserting chunks: [[UInt8]]) -> Data {
  let bytes = [UInt8](original)
  return Data(bytes[..<33] + chunks.joined() + bytes[33...])
}

private func occurrences(of needle: String, in data: Data) -> Int {
  let hay = [UInt8](data)
  let n = Array(needle.utf8)
  guard hay.count >= n.count else { return 0 }
  return (0...hay.count - n.count).filter { hay[$0..<$0 + n.count].elementsEqual(n) }.count
}

/// Runs `prepare` on hostile input: it may refuse, but only with an `ImageRejection`.
private func prepareOrRefuse(_ data: Data) -> Result<PreparedImage, ImageRejection> {
  do {
    return .success(try ImagePreparer.prepare(data))
  } catch let rejection as ImageRejection {
    #expect(!rejection.reason.isEmpty && !rejection.reason.contains("\n"))
    return .failure(rejection)
  } catch {
    Issue.record("unexpected error \(error)")
    return .failure(ImageRejection(.damaged, "\(error)"))
  }
}

@Suite struct ImagePreparerTests {
  @Test func everyPngSuiteFileIsAcceptedUnchanged() throws {
    let files = Corpus.files("png/suite")
    #expect(files.count == 51)
    for file in files {
      let data = try Data(contentsOf: file)
      let image = try ImagePreparer.prepare(data)
      #expect(image.format == .png, "\(file.lastPathComponent)")
      #expect(image.width == 32 && image.height == 32, "\(file.lastPathComponent)")
      #expect(image.data == data, "\(file.lastPathComponent) has no metadata to strip")
      #expect(image.removedMetadata.isEmpty)
    }
  }

  @Test func baselineJpegsAreAccepted() throws {
    for name in ["testorig.jpg", "testimgint.jpg"] {
      let data = try Corpus.data("jpeg/" + name)
      let image = try ImagePreparer.prepare(data)
      #expect(image.format == .jpeg)
      #expect(image.width == 227 && image.height == 149, "\(name)")
      #expect(image.orientation == 1)
      #expect(image.removedMetadata.isEmpty && image.data == data)
    }
  }

  @Test func crashersAndBadPalettesNeverCrash() throws {
    var refused: [String: String] = [:]
    for file in Corpus.files("png/crashers") + Corpus.files("png/badpal") {
      if case .failure(let rejection) = prepareOrRefuse(try Data(contentsOf: file)) {
        refused[file.lastPathComponent] = rejection.reason
      }
    }
    #expect(
      refused["huge_tEXt_chunk.png"] == "truncated PNG (tEXt chunk runs past the end of the file)")
    #expect(refused["huge_IDAT.png"] == "truncated PNG (IDAT chunk runs past the end of the file)")
    #expect(refused["badcrc.png"] == "damaged PNG (bad checksum in IDAT chunk)")
    #expect(refused["test-palette-8.png"] == nil)
  }

  @Test func twelveBitJpegIsRefused() throws {
    #expect(
      throws: ImageRejection(.unsupported, "unsupported JPEG (12-bit samples; 8-bit expected)")
    ) {
      try ImagePreparer.prepare(try Corpus.data("jpeg/monkey12.jpg"))
    }
  }

  @Test func arithmeticJpegIsMeasured() throws {
    let image = try ImagePreparer.prepare(try Corpus.data("jpeg/testimgari.jpg"))
    #expect(image.width == 227 && image.height == 149)
  }

  @Test func jpegLosesGpsAndCameraButKeepsOrientation() throws {
    let original = try Corpus.data("jpeg/testorig.jpg")
    let xmp = Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>GPSLatitude</x:xmpmeta>".utf8)
    let tagged = jpeg(
      original,
      inserting: jpegSegment(0xE1, exifWithGPS(orientation: 6)) + jpegSegment(0xE1, xmp)
        + jpegSegment(0xED, Array("Photoshop 3.0\0".utf8)))
    #expect(occurrences(of: "Canon!", in: tagged) == 1)

    let image = try ImagePreparer.prepare(tagged)
    #expect(image.removedMetadata == ["Exif", "XMP", "IPTC"])
    #expect(image.orientation == 6)
    #expect((image.width, image.height) == (227, 149))
    #expect(occurrences(of: "Canon!", in: image.data) == 0)
    #expect(occurrences(of: "GPS", in: image.data) == 0)
    #expect(occurrences(of: "Photoshop", in: image.data) == 0)
    // What is left is the original plus one minimal Exif block: 4 + 6 + 26 bytes.
    #expect(occurrences(of: "Exif\0\0", in: image.data) == 1)
    #expect(image.data.count == original.count + 36)

    // Preparing again finds the orientation and nothing more to remove.
    let again = try ImagePreparer.prepare(image.data)
    #expect(again.orientation == 6 && again.removedMetadata.isEmpty && again.data == image.data)
  }

  @Test func uprightExifIsDroppedWhole() throws {
    let original = try Corpus.data("jpeg/testorig.jpg")
    let tagged = jpeg(original, inserting: jpegSegment(0xE1, exifWithGPS(orientation: 1)))
    let image = try ImagePreparer.prepare(tagged)
    #expect(image.removedMetadata == ["Exif"] && image.orientation == 1)
    #expect(image.data == original)
  }

  @Test func pngLosesTextAndExifButKeepsOrientation() throws {
    let original = try Corpus.data("png/suite/basn2c08.png")
    let text = PNGContainer.chunk("tEXt", Array("Comment\0taken at home".utf8))
    let xmp = PNGContainer.chunk("iTXt", Array("XML:com.adobe.xmp\0\0\0\0\0<x/>".utf8))
    let stripped = try ImagePreparer.prepare(png(original, inserting: [text, xmp]))
    #expect(stripped.removedMetadata == ["text", "XMP"])
    #expect(stripped.data == original)

    let exif = PNGContainer.chunk("eXIf", Array(exifWithGPS(orientation: 8).dropFirst(6)))
    let turned = try ImagePreparer.prepare(png(original, inserting: [exif]))
    #expect(turned.orientation == 8 && turned.removedMetadata == ["Exif"])
    let minimal = PNGContainer.chunk("eXIf", ExifOrientation.minimalTIFF(orientation: 8))
    #expect(turned.data == png(original, inserting: [minimal]))
    #expect(occurrences(of: "Canon!", in: turned.data) == 0)
  }

  @Test func ancillaryChunkWithBadChecksumIsLeftOut() throws {
    let original = try Corpus.data("png/suite/basn2c08.png")
    var gamma = PNGContainer.chunk("gAMA", [0, 0, 0xB1, 0x8F])
    gamma[gamma.count - 1] ^= 0xFF
    let image = try ImagePreparer.prepare(png(original, inserting: [gamma]))
    #expect(image.data == original && image.removedMetadata.isEmpty)
  }

  @Test func truncatedImagesAreRefused() throws {
    for path in ["png/suite/basn6a16.png", "jpeg/testorig.jpg"] {
      let data = try Corpus.data(path)
      let half = data.prefix(data.count / 2)
      #expect(throws: ImageRejection.self) { try ImagePreparer.prepare(half) }
      if case .failure(let rejection) = prepareOrRefuse(half) {
        #expect(rejection.kind == .damaged)
        #expect(rejection.reason.hasPrefix("truncated "), "\(rejection.reason)")
      }
    }
  }

  @Test func everyPrefixAndSomeBitFlipsAreHandled() throws {
    for path in ["jpeg/testorig.jpg", "png/suite/basn3p08.png"] {
      let data = try Corpus.data(path)
      for length in stride(from: 0, to: data.count, by: 7) {
        if case .success = prepareOrRefuse(data.prefix(length)) {
          Issue.record("\(path) cut at \(length) was accepted")
        }
      }
      var generator = SplitMix(seed: 42)
      for _ in 0..<300 {
        var bytes = [UInt8](data)
        for _ in 0..<4 {
          bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(
            truncatingIfNeeded: generator.next())
        }
        _ = prepareOrRefuse(Data(bytes))
      }
    }
  }

  @Test func nonImagesAreRefusedByTheirBytes() throws {
    #expect(throws: ImageRejection(.notAnImage, "not an image (PNG, JPEG, GIF or WebP expected)")) {
      try ImagePreparer.prepare(Data("just text, named cat.png\n".utf8))
    }
    #expect(throws: ImageRejection(.unreadable, "is empty")) { try ImagePreparer.prepare(Data()) }
    #expect(ImageFormat.sniff(try Corpus.data("jpeg/testorig.jpg")) == .jpeg)
  }

  @Test func absurdDimensionsAreRefused() throws {
    let original = [UInt8](try Corpus.data("png/suite/basn2c08.png"))
    // IHDR for 40000×1, 8-bit RGB, replacing the original's.
    var header = [UInt8]()
    header.appendBigEndian(40_000, 4)
    header.appendBigEndian(1, 4)
    header += [8, 2, 0, 0, 0]
    let wide = Data(original[..<8] + PNGContainer.chunk("IHDR", header) + original[33...])
    #expect(
      throws: ImageRejection(
        .unsupported,
        "PNG image too large (40000×1 pixels; at most 30000 a side and 100 megapixels)")
    ) { try ImagePreparer.prepare(wide) }
  }

  @Test func gifIsMeasuredAndLosesComments() throws {
    let image = try ImagePreparer.prepare(Data(TinyImages.gif(comment: "shot on a Canon!")))
    #expect(image.format == .gif && image.width == 3 && image.height == 2)
    #expect(image.removedMetadata == ["comment"])
    #expect(image.data == Data(TinyImages.gif(comment: nil)))
    #expect(throws: ImageRejection.self) {
      try ImagePreparer.prepare(Data(TinyImages.gif(comment: nil).dropLast()))
    }
  }

  @Test func webpIsMeasuredAndLosesExifAndXmp() throws {
    let plain = try ImagePreparer.prepare(Data(TinyImages.webp(extras: [])))
    #expect(plain.format == .webp && plain.width == 1 && plain.height == 1)
    #expect(plain.removedMetadata.isEmpty)

    let exif = Array(exifWithGPS(orientation: 3).dropFirst(6))
    let tagged = Data(TinyImages.webp(extras: [("EXIF", exif), ("XMP ", Array("<x/>".utf8))]))
    let image = try ImagePreparer.prepare(tagged)
    #expect(image.removedMetadata == ["Exif", "XMP"] && image.orientation == 3)
    let minimal = ExifOrientation.minimalTIFF(orientation: 3)
    #expect(image.data == Data(TinyImages.webp(extras: [("EXIF", minimal)])))
  }

  @Test func byteSizesReadNaturally() {
    #expect(ImageFile.formatSize(512) == "512 B")
    #expect(ImageFile.formatSize(84 * 1024 + 100) == "84 KB")
    #expect(ImageFile.formatSize(5 * 1024 * 1024) == "5 MB")
    #expect(ImageFile.formatSize(1_258_291) == "1.2 MB")
  }
}

@Suite struct ImageFileTests {
  /// A fresh directory removed when `body` returns.
  private func inTemporaryDirectory(_ body: (URL) throws -> Void) throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("forum-images-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try body(directory)
  }

  private func refusal(_ path: String, limit: Int = 5 * 1024 * 1024) -> ImageRejection? {
    do {
      _ = try ImageFile.read(path: path, limit: limit)
      return nil
    } catch {
      return error as? ImageRejection
    }
  }

  @Test func readsARegularFile() throws {
    let path = Corpus.root.appendingPathComponent("jpeg/testorig.jpg").path
    let data = try ImageFile.read(path: path, limit: 5 * 1024 * 1024)
    #expect(data.count == 5770)
  }

  @Test func refusesWhatIsNotAPlainReadableFile() throws {
    try inTemporaryDirectory { directory in
      #expect(refusal(directory.path) == ImageRejection(.unreadable, "is a directory"))

      let fifo = directory.appendingPathComponent("pipe.png").path
      #expect(mkfifo(fifo, 0o600) == 0)
      #expect(refusal(fifo) == ImageRejection(.unreadable, "is not a regular file (a FIFO)"))

      let empty = directory.appendingPathComponent("empty.png")
      try Data().write(to: empty)
      #expect(refusal(empty.path) == ImageRejection(.unreadable, "is empty"))

      let missing = directory.appendingPathComponent("missing.png").path
      #expect(refusal(missing) == ImageRejection(.unreadable, "no such file"))

      let locked = directory.appendingPathComponent("locked.png")
      try Data([1, 2, 3]).write(to: locked)
      #expect(chmod(locked.path, 0) == 0)
      // Root reads any file, so the refusal can only be seen as another user.
      if getuid() != 0 {
        #expect(refusal(locked.path) == ImageRejection(.unreadable, "permission denied"))
      }
    }
    #expect(
      refusal("/dev/zero") == ImageRejection(.unreadable, "is not a regular file (a device)"))
  }

  @Test func refusesFilesOverTheLimit() throws {
    try inTemporaryDirectory { directory in
      let file = directory.appendingPathComponent("big.png")
      try Data(count: 2049).write(to: file)
      #expect(
        refusal(file.path, limit: 2048)
          == ImageRejection(.overLimit, "is 2 KB, larger than the 2 KB limit"))
      #expect(try ImageFile.read(path: file.path, limit: 2049).count == 2049)
    }
  }

  @Test func expandsTheHomeDirectory() throws {
    let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
    #expect(ImageFile.expandTilde("~/cat.png") == home + "/cat.png")
    #expect(ImageFile.expandTilde("~") == home)
    #expect(ImageFile.expandTilde("a/~b") == "a/~b")
    let rootHome = try #require(getpwnam("root")).pointee.pw_dir.map { String(cString: $0) }
    #expect(ImageFile.expandTilde("~root/x") == (rootHome ?? "") + "/x")
  }
}

/// Small hand-made GIF and WebP files, built here so the expected bytes are known exactly.
private enum TinyImages {
  /// A 3×2 GIF89a with a 2-colour table and an optional comment before the image.
  static func gif(comment: String?) -> [UInt8] {
    var bytes = Array("GIF89a".utf8) + [3, 0, 2, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
    if let comment {
      bytes += [0x21, 0xFE, UInt8(comment.utf8.count)] + Array(comment.utf8) + [0]
    }
    // Image descriptor, LZW minimum code size 2, one data sub-block, trailer.
    bytes += [0x2C, 0, 0, 0, 0, 3, 0, 2, 0, 0] + [2, 3, 0x84, 0x8F, 0x05, 0] + [0x3B]
    return bytes
  }

  /// A 1×1 lossless WebP; with `extras` it becomes an extended (VP8X) file carrying them.
  static func webp(extras: [(String, [UInt8])]) -> [UInt8] {
    let vp8l: [UInt8] = [0x2F, 0, 0, 0, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xFE, 0x07]
    var chunks = [(String, [UInt8])]()
    if !extras.isEmpty {
      let flags: UInt8 = extras.reduce(0) { $0 | ($1.0 == "EXIF" ? 0x08 : 0x04) }
      chunks.append(("VP8X", [flags, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
    }
    chunks.append(("VP8L", vp8l))
    chunks += extras
    var body = Array("WEBP".utf8)
    for (fourCC, payload) in chunks {
      body += Array(fourCC.utf8)
      body.appendLittleEndian(payload.count, 4)
      body += payload + (payload.count % 2 == 1 ? [0] : [])
    }
    var riff = Array("RIFF".utf8)
    riff.appendLittleEndian(body.count, 4)
    return riff + body
  }
}

/// A small seeded generator, so a failing mutation can be replayed.
private struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
