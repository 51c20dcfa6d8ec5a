import CImageDecode
import Foundation
import Testing

@testable import Datastore
@testable import Forum
@testable import ForumCLI

/// Replays every input the fuzzers ever crashed on (Fixtures/fuzz/TARGET, kept by hand from
/// Scripts/fuzz.sh runs) and the fuzz seeds (Fuzz/seeds) through the code each target tests, the
/// way the target calls it, so a fixed crash stays fixed without running libFuzzer.
@Suite("fuzz regressions")
struct FuzzRegressionTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// Every file under Fixtures/fuzz/TARGET and Fuzz/seeds/TARGET.
  static func inputs(_ target: String) -> [URL] {
    ["Fixtures/fuzz/" + target, "Fuzz/seeds/" + target].flatMap { folder -> [URL] in
      let directory = root.appendingPathComponent(folder)
      let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
      return names.sorted().map { directory.appendingPathComponent($0) }
    }
  }

  @Test("the kept crashes and seeds exist")
  func fixturesExist() {
    #expect(
      FuzzRegressionTests.inputs("json").contains { $0.lastPathComponent == "infinite-number" })
    for target in ["png", "jpeg", "gif", "webp", "tokenizer"] {
      #expect(!FuzzRegressionTests.inputs(target).isEmpty, "\(target)")
    }
  }

  @Test(
    "C decoders: every kept input decodes or fails cleanly, within budget",
    arguments: ["png", "jpeg", "gif", "webp"])
  func decoders(target: String) throws {
    let decoders = [
      "png": cimg_decode_png, "jpeg": cimg_decode_jpeg, "gif": cimg_decode_gif,
      "webp": cimg_decode_webp,
    ]
    let decode = try #require(decoders[target])
    var limits = ImageDecoder.limits
    for url in FuzzRegressionTests.inputs(target) {
      let data = try [UInt8](Data(contentsOf: url))
      // The same preview size the fuzz target derives from the length.
      let width = Int32(1 + data.count % 97)
      let height = Int32(1 + data.count / 97 % 61)
      var image = cimg_image()
      let status = decode(data, data.count, width, height, &limits, &image)
      // A decoder whose library did not load would "fail cleanly" on every input.
      #expect(image.missing_library == CIMG_LIBRARY_NONE, "\(ImageDecoder.message(of: &image))")
      if status == 0 {
        #expect(image.width >= 1 && image.width <= width, "\(url.lastPathComponent)")
        #expect(image.height >= 1 && image.height <= height, "\(url.lastPathComponent)")
        #expect(image.pixels != nil)
      } else {
        #expect(!ImageDecoder.message(of: &image).isEmpty)
      }
      cimg_image_free(&image)
    }
  }

  @Test("containers: a prepared image prepares again to itself")
  func containers() throws {
    let inputs = ["containers", "png", "jpeg", "gif", "webp"].flatMap(FuzzRegressionTests.inputs)
    for url in inputs {
      let data = try Data(contentsOf: url)
      guard let image = try? ImagePreparer.prepare(data) else { continue }
      let again = try ImagePreparer.prepare(image.data)
      #expect(again.data == image.data, "\(url.lastPathComponent)")
      #expect((again.width, again.height) == (image.width, image.height))
    }
  }

  @Test("JSON reader: what parses prints and parses back equal; the canonical writer agrees")
  func json() throws {
    for url in FuzzRegressionTests.inputs("json") {
      var text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
      let value = try? JSONValue.parse(text)
      if let value {
        #expect(try JSONValue.parse(value.jsonText()) == value, "\(url.lastPathComponent)")
      }
      let written = text.withUTF8 { bytes -> [UInt8]? in
        var reader = CanonicalJSON(bytes: bytes)
        var out: [UInt8] = []
        guard let end = reader.value(at: 0, depth: 0, to: &out),
          reader.skipSpace(end) == bytes.count
        else { return nil }
        return out
      }
      if let written { #expect(written == value?.jsonBytes(), "\(url.lastPathComponent)") }
    }
  }

  @Test("tokenizer: every word keeps the rest of the line; only the last may be unclosed")
  func tokenizer() throws {
    for url in FuzzRegressionTests.inputs("tokenizer") {
      let line = String(decoding: try Data(contentsOf: url), as: UTF8.self)
      let command = CommandWords(line: line)
      for (index, word) in command.words.enumerated() {
        #expect(line.hasSuffix(word.rest), "\(url.lastPathComponent)")
        #expect(word.value != nil || index == command.words.count - 1)
      }
    }
  }
}
