#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout, stderr: swapped for memory streams while a body runs
#else
  import Foundation
#endif

/// What a body prints, held in memory instead: a script's grouped commands (`CommandLoop`)
/// print only once their group is committed, and nothing at all when it is not. Its notes on
/// stderr (a mention nobody was told of) are held too, so they come after its own output and
/// never for a post that was not committed.
enum CapturedOutput {
  /// Runs `body` with stdout and stderr going to memory; the bytes it printed to each are
  /// appended to `output` and `notes` whether it returns or throws. Without memory streams,
  /// `body` prints as usual.
  static func capture<T>(
    into output: inout [UInt8], notes: inout [UInt8], _ body: () throws -> T
  ) rethrows -> T {
    fflush(stdout)
    fflush(stderr)
    var outputBytes: UnsafeMutablePointer<CChar>?
    var outputSize = 0
    var noteBytes: UnsafeMutablePointer<CChar>?
    var noteSize = 0
    guard let outputStream = open_memstream(&outputBytes, &outputSize) else { return try body() }
    guard let noteStream = open_memstream(&noteBytes, &noteSize) else {
      fclose(outputStream)
      free(outputBytes)
      return try body()
    }
    let (savedOutput, savedNotes) = (stdout, stderr)
    (stdout, stderr) = (outputStream, noteStream)
    defer {
      (stdout, stderr) = (savedOutput, savedNotes)
      fclose(outputStream)
      fclose(noteStream)
      take(outputBytes, outputSize, into: &output)
      take(noteBytes, noteSize, into: &notes)
    }
    return try body()
  }

  /// Appends a closed memory stream's bytes and frees them.
  private static func take(
    _ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, into buffer: inout [UInt8]
  ) {
    guard let bytes else { return }
    bytes.withMemoryRebound(to: UInt8.self, capacity: size) {
      buffer.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
    }
    free(bytes)
  }

  /// Writes what a body printed to the real stdout, then its notes to the real stderr.
  static func write(_ output: [UInt8], notes: [UInt8]) {
    output.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, stdout) }
    fflush(stdout)
    guard !notes.isEmpty else { return }
    notes.withUnsafeBytes { _ = fwrite($0.baseAddress, 1, $0.count, stderr) }
    fflush(stderr)
  }
}
