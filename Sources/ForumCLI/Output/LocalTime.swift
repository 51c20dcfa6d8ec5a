#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Absolute times as people read them: the local time zone (`TZ` honoured), with the zone shown.
enum LocalTime {
  /// `2026-11-30 12:06 JST` for milliseconds since 1970.
  static func string(milliseconds: Int64) -> String {
    var seconds = time_t(milliseconds / 1000)
    var parts = tm()
    tzset()
    guard localtime_r(&seconds, &parts) != nil else { return "" }
    var buffer = [CChar](repeating: 0, count: 64)
    let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M %Z", &parts)
    return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
