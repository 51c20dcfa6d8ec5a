import CImageDecode
import Testing

@testable import ForumCLI

/// The loader behind the image decoders, without the process around it: every library resolves
/// from its Debian soname, and a missing or wrong one is a one-line reason, never a crash.
@Suite("Image library loader")
struct ImageLibraryProbeTests {
  static let libraries: [cimg_library] = [
    CIMG_LIBRARY_PNG, CIMG_LIBRARY_JPEG, CIMG_LIBRARY_GIF, CIMG_LIBRARY_WEBP,
    CIMG_LIBRARY_WEBPDEMUX,
  ]

  static func probe(_ library: cimg_library, _ soname: String) -> (Int32, String) {
    var reason = [CChar](repeating: 0, count: Int(CIMG_ERROR_LENGTH))
    let status = cimg_library_probe(library, soname, &reason, reason.count)
    return (status, String(cString: reason))
  }

  @Test("every decoder's functions resolve from its installed soname", arguments: libraries)
  func installedLibraryResolves(library: cimg_library) {
    let soname = String(cString: cimg_library_soname(library))
    let (status, reason) = ImageLibraryProbeTests.probe(library, soname)
    #expect(status == 0, "\(soname): \(reason)")
    #expect(ImageLibraryUnavailable.check(library) == nil)
  }

  @Test("a soname that is not installed is dlopen's one-line reason", arguments: libraries)
  func missingLibrary(library: cimg_library) {
    let (status, reason) = ImageLibraryProbeTests.probe(library, "libforum-test-missing.so.1")
    #expect(status == -1)
    #expect(reason.contains("libforum-test-missing.so.1"), "\(reason)")
    #expect(!reason.contains("\n"))
  }

  @Test("a library without the functions names the first one missing")
  func wrongLibrary() {
    let expected: [(cimg_library, String)] = [
      (CIMG_LIBRARY_PNG, "png_create_read_struct"), (CIMG_LIBRARY_JPEG, "jpeg_std_error"),
      (CIMG_LIBRARY_GIF, "DGifOpen"), (CIMG_LIBRARY_WEBP, "WebPGetFeaturesInternal"),
      (CIMG_LIBRARY_WEBPDEMUX, "WebPDemuxInternal"),
    ]
    for (library, function) in expected {
      let (status, reason) = ImageLibraryProbeTests.probe(library, "libc.so.6")
      #expect(status == -1)
      #expect(reason == "libc.so.6 has no \(function)")
    }
  }

  @Test("the sentence names the package to install, in English and Japanese, on one line")
  func sentence() {
    let missing = ImageLibraryUnavailable(CIMG_LIBRARY_WEBP, reason: "libwebp.so.7: cannot open")
    let english = Messages(japanese: false).imageLibraryUnavailable(missing)
    #expect(
      english
        == "images need libwebp7, which cannot be loaded (libwebp.so.7: cannot open); "
        + "install it (Debian: apt-get install libwebp7)")
    let japanese = Messages(japanese: true).imageLibraryUnavailable(missing)
    #expect(japanese.contains("libwebp7") && japanese.contains("apt-get install libwebp7"))
    #expect(!japanese.contains("\n") && !english.contains("\n"))
    #expect(CLIError(missing).exitStatus == 1)
  }
}
