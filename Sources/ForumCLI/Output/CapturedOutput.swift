#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout: swapped for a memory stream while a body runs
#else
  import Foundation
#endif

/// What a body prints to stdout, held in memory instead: a script's grouped commands
/// (`CommandLoop`) print only once their group is committed, and nothing at all when it is not.
enum CapturedOutput {
  /// Runs `body` with stdout going to memory; the bytes it printed are appended to `output`
  /// whether it returns or throws. Without a memory stream, `body` prints as usual.
  static func capture<T>(into output: inout [UInt8], _ body: () throws -> T) rethrows -> T {
    fflush(stdout)
    var bytes: UnsafeMutablePointer<CChar>?
    var size = 0
    guard let stream = open_memstream(&bytes, &size) else { return try body() }
    let saved = stdout
    stdout = stream
    defer {
      fflush(stream)
      stdout = saved
      fclose(stream)
      if let bytes {
        bytes.withMemoryRebound(to: UInt8.self, capacity: size) {
          output.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
        }
        free(bytes)
      }
    }
    return try body()
  }

  /// Writes what a body printed to the real stdout.
  static func write(_ output: [UInt8]) {
    guard !output.isEmpty else { return }
    output.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
  }
}
