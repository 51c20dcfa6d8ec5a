import Foundation
import HostileImages
import Testing

/// The image decoders' C libraries are opened with dlopen when a picture is first decoded, not
/// linked: a command that draws no picture maps none of them, one that does maps only its own,
/// and one whose library cannot be loaded says what to install in one line and changes nothing.
/// What the process loads is read from the dynamic loader's own account (LD_DEBUG=libs).
@Suite("Image libraries load on first use")
struct LazyImageLibraryTests {
  static let sonames = [
    "libpng16.so.16", "libjpeg.so.62", "libgif.so.7", "libwebp.so.7", "libwebpdemux.so.2",
  ]

  /// The sonames the dynamic loader looked for during a run, from LD_DEBUG=libs on stderr.
  static func loaded(_ result: RunResult) throws -> Set<String> {
    // Proof the loader's account is there at all: the C library is looked for by every run.
    guard result.stderr.contains("find library=libc.so.6") else {
      throw ForumTestError("no LD_DEBUG=libs output on stderr: \(result.summary)")
    }
    return Set(sonames.filter { result.stderr.contains("find library=\($0)") })
  }

  static let debugLibraries = ["LD_DEBUG": "libs"]

  /// A board holding one thread per format, posted one process each, in this order:
  /// 1 PNG, 2 JPEG, 3 GIF, 4 WebP (still), 5 WebP (animated).
  static func boardWithEveryFormat() throws -> ForumFixture {
    let fixture = try ForumFixture()
    let pictures: [(String, [UInt8])] = [
      ("a.png", PNGImages.honest(width: 24, height: 16)),
      ("b.jpg", JPEGImages.progressive(width: 24, height: 16, scans: 3)),
      ("c.gif", GIFImages.honest(width: 24, height: 16)),
      ("d.webp", WebPImages.lossless(width: 24, height: 16)),
      ("e.webp", WebPImages.animation(canvas: (24, 16), frames: [(24, 16), (24, 16)])),
    ]
    for (name, bytes) in pictures {
      let path = fixture.root + "/" + name
      try Data(bytes).write(to: URL(fileURLWithPath: path))
      try fixture.ok(["new", "--title", "picture " + name, "--image", path])
    }
    return fixture
  }

  @Test("a command that draws no picture loads none of the five libraries")
  func noPictureNoLibraries() throws {
    let fixture = try LazyImageLibraryTests.boardWithEveryFormat()
    for arguments in [["--version"], ["list"], ["show", "4"], ["--images", "none", "show", "1"]] {
      let result = try fixture.run(arguments, environment: LazyImageLibraryTests.debugLibraries)
      #expect(result.status == 0, "\(result.summary)")
      #expect(try LazyImageLibraryTests.loaded(result) == [], "forum \(arguments)")
    }
  }

  @Test("drawing a picture loads its format's library and no other")
  func drawingLoadsItsOwnLibrary() throws {
    let fixture = try LazyImageLibraryTests.boardWithEveryFormat()
    let expected: [(thread: Int, libraries: Set<String>)] = [
      (1, ["libpng16.so.16"]), (2, ["libjpeg.so.62"]), (3, ["libgif.so.7"]),
      (4, ["libwebp.so.7"]), (5, ["libwebp.so.7", "libwebpdemux.so.2"]),
    ]
    for (thread, libraries) in expected {
      let result = try fixture.run(
        ["--images", "blocks", "show", "\(thread)"],
        environment: LazyImageLibraryTests.debugLibraries)
      #expect(result.status == 0, "\(result.summary)")
      #expect(result.stdout.contains("▀") || result.stdout.contains("▄"), "\(result.summary)")
      #expect(try LazyImageLibraryTests.loaded(result) == libraries, "thread \(thread)")
    }
  }

  /// A directory that, put first on LD_LIBRARY_PATH, stands in for `soname` with `file`'s
  /// contents: an empty file (a broken install) or another library (one without the functions).
  static func standIn(for soname: String, in fixture: ForumFixture, linkTo target: String?)
    throws -> [String: String]
  {
    let directory = fixture.root + "/standin-" + soname
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/" + soname
    if let target {
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    } else {
      FileManager.default.createFile(atPath: path, contents: Data())
    }
    return ["LD_LIBRARY_PATH": directory]
  }

  @Test("a WebP whose library cannot be loaded is refused with one line and nothing is stored")
  func missingLibraryRefusesThePost() throws {
    let fixture = try ForumFixture()
    try fixture.ok(["new", "--title", "before"])
    let path = fixture.root + "/d.webp"
    try Data(WebPImages.lossless(width: 24, height: 16)).write(to: URL(fileURLWithPath: path))
    let before = try fixture.fingerprint()
    let broken = try LazyImageLibraryTests.standIn(
      for: "libwebp.so.7", in: fixture, linkTo: nil)
    let result = try fixture.run(
      ["new", "--title", "with picture", "--image", path], environment: broken)
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderrLines.count == 1, "\(result.summary)")
    #expect(
      result.stderr.hasPrefix("forum: images need libwebp7, which cannot be loaded ("),
      "\(result.summary)")
    #expect(result.stderr.contains("file too short"), "dlopen's reason: \(result.summary)")
    #expect(
      result.stderr.hasSuffix("; install it (Debian: apt-get install libwebp7)\n"),
      "\(result.summary)")
    #expect(try fixture.fingerprint() == before)

    // The rest of the program works without it: other formats attach.
    let png = fixture.root + "/a.png"
    try Data(PNGImages.honest(width: 8, height: 8)).write(to: URL(fileURLWithPath: png))
    let other = try fixture.run(["new", "--title", "png", "--image", png], environment: broken)
    #expect(other.status == 0, "\(other.summary)")
  }

  @Test("a library without the functions is refused, naming the first one missing")
  func libraryWithoutTheFunctions() throws {
    let fixture = try ForumFixture()
    let path = fixture.root + "/c.gif"
    try Data(GIFImages.honest(width: 8, height: 8)).write(to: URL(fileURLWithPath: path))
    // The C library under giflib's name: it loads, but has no DGifOpen.
    let wrong = try LazyImageLibraryTests.standIn(
      for: "libgif.so.7", in: fixture, linkTo: "/lib/x86_64-linux-gnu/libc.so.6")
    let result = try fixture.run(["new", "--title", "gif", "--image", path], environment: wrong)
    #expect(result.status == 1, "\(result.summary)")
    #expect(result.stderrLines.count == 1, "\(result.summary)")
    #expect(
      result.stderr.contains("images need libgif7, which cannot be loaded (libgif.so.7 has no "),
      "\(result.summary)")
    #expect(result.stderr.contains("apt-get install libgif7"), "\(result.summary)")
    #expect(try ImageAttachTests.counts(fixture) == (0, 0))
  }

  @Test("a thread whose picture cannot be decoded still shows its text, and says why once")
  func missingLibraryStillShowsTheThread() throws {
    let fixture = try LazyImageLibraryTests.boardWithEveryFormat()
    let broken = try LazyImageLibraryTests.standIn(
      for: "libwebp.so.7", in: fixture, linkTo: nil)
    let before = try fixture.fingerprint()
    let result = try fixture.script(
      ["show 4", "show 5", "show 1"], arguments: ["--images", "blocks"], environment: broken)
    #expect(result.status == 0, "\(result.summary)")
    #expect(result.stdout.contains("picture d.webp"), "\(result.summary)")
    #expect(result.stdout.contains("picture e.webp"), "\(result.summary)")
    // Both WebP threads keep their picture's text line.
    #expect(
      result.stdoutLines.filter { $0.hasPrefix("[image: ") && $0.contains(" WebP ") }.count == 2,
      "\(result.summary)")
    // The PNG of thread 1 is still drawn.
    #expect(result.stdout.contains("▀") || result.stdout.contains("▄"), "\(result.summary)")
    #expect(
      result.stderrLines == [
        "forum: images need libwebp7, which cannot be loaded "
          + "(\(LazyImageLibraryTests.stderrReason(result))); "
          + "install it (Debian: apt-get install libwebp7)"
      ], "\(result.summary)")
    #expect(try fixture.fingerprint() == before)

    let japanese = try fixture.run(
      ["--images", "blocks", "show", "4"], lang: "ja_JP.UTF-8", environment: broken)
    #expect(japanese.status == 0, "\(japanese.summary)")
    #expect(japanese.stderrLines.count == 1, "\(japanese.summary)")
    #expect(japanese.stderr.contains("libwebp7"), "\(japanese.summary)")
    #expect(japanese.stderr.contains("apt-get install libwebp7"), "\(japanese.summary)")
    #expect(!japanese.stderr.contains("which cannot be loaded"), "\(japanese.summary)")
  }

  /// dlopen's reason inside the one line (the path of the stand-in, "file too short").
  static func stderrReason(_ result: RunResult) -> String {
    let line = result.stderrLines.first ?? ""
    guard let open = line.range(of: "cannot be loaded ("), let close = line.range(of: "); install")
    else { return "?" }
    return String(line[open.upperBound..<close.lowerBound])
  }
}
