#if canImport(FoundationEssentials)
  import Glibc
#else
  import Foundation
#endif

extension ForumMain {
  /// The process's environment, read from `environ` directly. FoundationEssentials'
  /// `ProcessInfo.environment` searches each entry for `=` by Character and cost a tenth of
  /// `forum --version`. As getenv(3) does, the first of two entries with one name wins; an
  /// entry without `=` is left out.
  public static func processEnvironment() -> [String: String] {
    environment(of: environ)
  }

  /// The environment an `environ`-shaped list (entries `NAME=VALUE`, ended by nil) holds.
  static func environment(
    of entries: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
  ) -> [String: String] {
    var count = 0
    while entries[count] != nil { count += 1 }
    // Sized once: growing the dictionary entry by entry cost most of the time.
    var environment: [String: String] = Dictionary(minimumCapacity: count)
    var entry = entries
    while let pointer = entry.pointee {
      entry += 1
      let length = strlen(pointer)
      pointer.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        let text = UnsafeBufferPointer(start: bytes, count: length)
        guard let equals = text.firstIndex(of: UInt8(ascii: "=")) else { return }
        let name = String(decoding: text[..<equals], as: UTF8.self)
        if environment[name] == nil {
          environment[name] = String(decoding: text[(equals + 1)...], as: UTF8.self)
        }
      }
    }
    return environment
  }
}
