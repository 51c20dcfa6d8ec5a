import CImageDecode
import Synchronization

/// A decoder's C library that could not be opened (not installed, broken, or without the
/// functions the decoder calls). The libraries are opened on the first decode that needs them
/// (CImageDecode's libraries.c), so this comes from a decode, never from start-up.
struct ImageLibraryUnavailable: Error, Equatable {
  /// The Debian package that installs it ("libwebp7").
  let package: String
  /// What failed, one line: dlopen's reason, or "libgif.so.7 has no DGifOpen".
  let reason: String

  init(_ library: cimg_library, reason: String) {
    package = String(cString: cimg_library_package(library))
    self.reason = reason
  }

  /// Nil when the library loads (once per process; later calls give the same answer).
  static func check(_ library: cimg_library) -> ImageLibraryUnavailable? {
    var reason = [CChar](repeating: 0, count: Int(CIMG_ERROR_LENGTH))
    guard cimg_library_load(library, &reason, reason.count) != 0 else { return nil }
    return ImageLibraryUnavailable(library, reason: String(cString: reason))
  }

  /// A process says it once: the first thread whose picture cannot be drawn.
  private static let said = Mutex(Set<String>())

  /// Whether this is the first time the process meets this package missing.
  func firstTime() -> Bool { Self.said.withLock { $0.insert(package).inserted } }
}
