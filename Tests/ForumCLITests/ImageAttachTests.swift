import Foundation
import Testing

@testable import Datastore
@testable import Forum

/// Attaching images through the `forum` binary, over the public corpus: what is stored, what
/// comes back from `image --save`, and that refusals store nothing.
@Suite("Images through the forum command")
struct ImageAttachTests {
  static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
      "Fixtures/corpus")

  static func files(_ folder: String) -> [String] {
    let directory = corpus.appendingPathComponent(folder).path
    return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
      .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
      .map { directory + "/" + $0 }
  }

  /// Threads and files in the store, to prove a refusal left nothing behind.
  static func counts(_ fixture: ForumFixture) throws -> (threads: Int, files: Int) {
    let store = try fixture.openStore()
    let threads = try store.master.count(Query(className: "Thread"))
    let connection = try Connection(path: fixture.db)
    let files = try connection.prepare("SELECT count(*) FROM files").firstRow { $0.int(0) } ?? -1
    return (threads, Int(files))
  }

  @Test("every PngSuite file and both baseline JPEGs attach and preview")
  func validCorpusAttachesAndPreviews() throws {
    let fixture = try ForumFixture()
    let paths =
      ImageAttachTests.files("png/suite")
      + ["jpeg/testorig.jpg", "jpeg/testimgint.jpg"].map {
        ImageAttachTests.corpus.appendingPathComponent($0).path
      }
    #expect(paths.count >= 50)  // the corpus holds 51 PngSuite files
    let script = paths.map { "new --title \"\(($0 as NSString).lastPathComponent)\" --image \($0)" }
    let posted = try fixture.script(script)
    #expect(posted.status == 0, "\(posted.summary)")
    #expect(try ImageAttachTests.counts(fixture) == (paths.count, paths.count))

    // A drawn preview (forced half-blocks, as the pipe is no terminal) for every thread.
    let shown = try fixture.script(
      (1...paths.count).map { "show \($0)" }, arguments: ["--images", "blocks"])
    #expect(shown.status == 0, "\(shown.summary)")
    let previews = shown.stdoutLines.filter { $0.hasPrefix("[image: ") }
    #expect(previews.count == paths.count)
    let blockRows = shown.stdoutLines.filter { $0.contains("▀") || $0.contains("▄") }
    #expect(blockRows.count >= paths.count)
  }

  @Test(
    "crashers and bad palettes attach and preview, or are refused with one line and store nothing",
    arguments: ImageAttachTests.files("png/crashers") + ImageAttachTests.files("png/badpal"))
  func hostileCorpus(path: String) throws {
    let fixture = try ForumFixture()
    let result = try fixture.run(["new", "--title", "x", "--image", path])
    let stored = try ImageAttachTests.counts(fixture)
    if result.status == 0 {
      #expect(stored == (1, 1))
      let shown = try fixture.run(["--images", "blocks", "show", "1"])
      #expect(shown.status == 0)
      #expect(shown.stdout.contains("▀") || shown.stdout.contains("▄"), "\(shown.summary)")
    } else {
      #expect(result.status == 1, "\(result.summary)")
      #expect(result.stderrLines.count == 1)
      #expect(result.stderr.hasPrefix("forum: cannot attach image: "))
      #expect(stored == (0, 0))
    }
  }

  @Test("the 12-bit JPEG is refused as E400002 and nothing is stored")
  func twelveBitJPEGRefused() throws {
    let fixture = try ForumFixture()
    let path = ImageAttachTests.corpus.appendingPathComponent("jpeg/monkey12.jpg").path
    let result = try fixture.run(["--json", "new", "--title", "monkey", "--image", path])
    #expect(result.status == 1)
    #expect(try result.jsonError().string("code") == "E400002")
    #expect(try ImageAttachTests.counts(fixture) == (0, 0))
  }

  @Test(
    "a file over 5 MB is E413001; a directory, /dev/zero and a text file named .png are refused")
  func refusedFiles() throws {
    let fixture = try ForumFixture()
    let big = fixture.root + "/big.png"
    var bytes = try Data(
      contentsOf: ImageAttachTests.corpus.appendingPathComponent("png/suite/basn2c08.png"))
    bytes.append(Data(count: 6 * 1024 * 1024))
    try bytes.write(to: URL(fileURLWithPath: big))
    let tooBig = try fixture.run(["--json", "new", "--title", "big", "--image", big])
    #expect(tooBig.status == 1)
    #expect(try tooBig.jsonError().string("code") == "E413001")

    let text = fixture.root + "/notes.png"
    try Data("just some words\n".utf8).write(to: URL(fileURLWithPath: text))
    for path in [fixture.root, "/dev/zero", text, fixture.root + "/missing.png"] {
      let result = try fixture.run(["new", "--title", "t", "--image", path])
      #expect(result.status == 1, "\(result.summary)")
      #expect(result.stderrLines.count == 1, "\(result.summary)")
    }
    #expect(try ImageAttachTests.counts(fixture) == (0, 0))
  }

  @Test("image --save returns the stored bytes; a PNG without metadata is byte-identical")
  func saveRoundTrip() throws {
    let fixture = try ForumFixture()
    let original = ImageAttachTests.corpus.appendingPathComponent("png/suite/basn2c08.png")
    try fixture.ok(["new", "--title", "png", "--image", original.path])
    let out = fixture.root + "/out.png"
    try fixture.ok(["image", "1", "--save", out])
    #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: original))

    // Stored bytes, exactly.
    let board = try fixture.openBoard()
    let stored = try board.imageBytes(of: try board.thread(1))
    #expect(Data(stored) == (try Data(contentsOf: URL(fileURLWithPath: out))))

    // An existing file is kept without --force and replaced with it.
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: out))
    let refused = try fixture.run(["image", "1", "--save", out])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("--force"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("keep me".utf8))
    try fixture.ok(["image", "1", "--save", out, "--force"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: original))
  }

  @Test("a JPEG carrying GPS Exif comes back from --save without it, orientation kept, and decodes")
  func gpsExifRemoved() throws {
    let fixture = try ForumFixture()
    let plain = try [UInt8](
      Data(contentsOf: ImageAttachTests.corpus.appendingPathComponent("jpeg/testorig.jpg")))
    let withGPS = [0xFF, 0xD8] + ImageAttachTests.exifSegment(orientation: 6) + plain.dropFirst(2)
    let input = fixture.root + "/gps.jpg"
    try Data(withGPS).write(to: URL(fileURLWithPath: input))
    #expect(ImageAttachTests.exifTags(withGPS).contains(0x8825))

    let posted = try fixture.run(["new", "--title", "photo", "--image", input])
    #expect(posted.status == 0, "\(posted.summary)")
    let shown = try fixture.ok(["show", "1"])
    #expect(shown.stdout.contains("Exif"), "the thread view says metadata was removed")
    let image = try fixture.ok(["--json", "show", "1"]).json().object("thread")?.object("image")
    #expect(image?.int("orientation") == 6, "the kept orientation is recorded for previews")

    let out = fixture.root + "/back.jpg"
    try fixture.ok(["image", "1", "--save", out])
    let saved = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
    let tags = ImageAttachTests.exifTags(saved)
    #expect(!tags.contains(0x8825), "no GPS IFD pointer left")
    #expect(tags.contains(0x0112), "orientation kept")
    #expect(!saved.contains(subsequence: Array("Canon".utf8)))

    // Still a JPEG the forum accepts and draws.
    try fixture.ok(["new", "--title", "again", "--image", out])
    let drawn = try fixture.ok(["--images", "blocks", "show", "2"])
    #expect(drawn.stdout.contains("▀") || drawn.stdout.contains("▄"))
  }

  @Test("--image takes a path with ~ expanded in a script")
  func promptedPathWithTilde() throws {
    let fixture = try ForumFixture()
    let home = fixture.root + "/home"
    try FileManager.default.copyItem(
      atPath: ImageAttachTests.corpus.appendingPathComponent("jpeg/testorig.jpg").path,
      toPath: home + "/pic.jpg")
    let result = try fixture.script(["new --image ~/pic.jpg", "A title", "A body", "."])
    #expect(result.status == 0, "\(result.summary)")
    let thread = try #require(try fixture.storedThreads().first)
    #expect(thread["fileName"]?.stringValue?.hasSuffix(".jpg") == true)
  }

  // MARK: Building a JPEG APP1 Exif segment with GPS and camera data

  /// APP1 "Exif": IFD0 with Make ("Canon"), Orientation and a GPS IFD holding a latitude ref.
  static func exifSegment(orientation: UInt16) -> [UInt8] {
    var tiff: [UInt8] = Array("MM".utf8) + [0x00, 0x2A, 0, 0, 0, 8]
    func short(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    func long(_ value: UInt32) -> [UInt8] {
      [
        UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF),
        UInt8(value & 0xFF),
      ]
    }
    // IFD0 at 8: 3 entries (2 + 36 bytes) + next-IFD (4) = 42 → data after it at 50.
    let makeOffset: UInt32 = 50
    let gpsOffset: UInt32 = makeOffset + 6
    tiff += short(3)
    tiff += short(0x010F) + short(2) + long(6) + long(makeOffset)  // Make, ASCII
    tiff += short(0x0112) + short(3) + long(1) + short(orientation) + [0, 0]
    tiff += short(0x8825) + short(4) + long(1) + long(gpsOffset)  // GPS IFD pointer
    tiff += long(0)
    tiff += Array("Canon".utf8) + [0]
    tiff += short(1) + short(0x0001) + short(2) + long(2) + Array("N".utf8) + [0, 0, 0] + long(0)
    let payload = Array("Exif".utf8) + [0, 0] + tiff
    let length = payload.count + 2
    return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
  }

  /// Tags of IFD0 in every APP1 Exif segment before the scan starts.
  static func exifTags(_ jpeg: [UInt8]) -> [UInt16] {
    var tags: [UInt16] = []
    var index = 2
    while index + 4 <= jpeg.count, jpeg[index] == 0xFF, jpeg[index + 1] != 0xDA {
      let marker = jpeg[index + 1]
      let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
      let body = Array(jpeg[(index + 4)..<min(jpeg.count, index + 2 + length)])
      if marker == 0xE1, body.starts(with: Array("Exif".utf8) + [0, 0]) {
        let tiff = Array(body.dropFirst(6))
        let big = tiff.starts(with: Array("MM".utf8))
        func read16(_ at: Int) -> Int {
          big ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : Int(tiff[at + 1]) << 8 | Int(tiff[at])
        }
        func read32(_ at: Int) -> Int {
          big ? read16(at) << 16 | read16(at + 2) : read16(at + 2) << 16 | read16(at)
        }
        let ifd = read32(4)
        if ifd + 2 <= tiff.count {
          for entry in 0..<read16(ifd) where ifd + 2 + entry * 12 + 2 <= tiff.count {
            tags.append(UInt16(read16(ifd + 2 + entry * 12)))
          }
        }
      }
      index += 2 + length
    }
    return tags
  }
}

extension Array where Element == UInt8 {
  func contains(subsequence: [UInt8]) -> Bool {
    guard !subsequence.isEmpty, count >= subsequence.count else { return false }
    return (0...(count - subsequence.count)).contains {
      self[$0..<($0 + subsequence.count)].elementsEqual(subsequence)
    }
  }
}
