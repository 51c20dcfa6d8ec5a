#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout, stderr: swapped for memory streams while a body runs
#else
  import Foundation
#endif

/// What bodies print, held in memory instead: a script's grouped commands (`CommandLoop`)
/// print only once their group is committed, and nothing at all when it is not. Their notes on
/// stderr (a mention nobody was told of) are held too, so they come after their own output and
/// never for a post that was not committed.
///
/// One capture serves a whole group: opening the two memory streams was 40,000 instructions
/// (glibc zeroes their buffers), a twentieth of a piped comment (BENCHMARKS W20).
final class CapturedOutput {
  /// Where each memory stream keeps its buffer and size: glibc writes them at each flush, so
  /// they live at fixed addresses until the stream is closed.
  private let outputBytes = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 1)
  private let outputSize = UnsafeMutablePointer<Int>.allocate(capacity: 1)
  private let noteBytes = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 1)
  private let noteSize = UnsafeMutablePointer<Int>.allocate(capacity: 1)
  private let outputStream: UnsafeMutablePointer<FILE>?
  private let noteStream: UnsafeMutablePointer<FILE>?
  /// How much of each stream a body has already been given.
  private var outputTaken = 0
  private var notesTaken = 0

  /// Opens the memory streams, kept until the capture is gone. Without them, bodies print as
  /// usual.
  init() {
    (outputBytes.pointee, outputSize.pointee) = (nil, 0)
    (noteBytes.pointee, noteSize.pointee) = (nil, 0)
    var output = open_memstream(outputBytes, outputSize)
    let notes = output == nil ? nil : open_memstream(noteBytes, noteSize)
    if notes == nil, let opened = output {
      fclose(opened)
      free(outputBytes.pointee)
      output = nil
    }
    (outputStream, noteStream) = (output, notes)
  }

  /// Runs `body` with stdout and stderr going to memory (only while it runs: what the group
  /// prints between bodies, a notice that the database is busy, is not held); the bytes it
  /// printed to each are appended to `output` and `notes` whether it returns or throws.
  func capture<T>(
    into output: inout [UInt8], notes: inout [UInt8], _ body: () throws -> T
  ) rethrows -> T {
    guard let outputStream, let noteStream else { return try body() }
    fflush(stdout)
    fflush(stderr)
    let saved = (stdout, stderr)
    (stdout, stderr) = (outputStream, noteStream)
    defer {
      (stdout, stderr) = saved
      fflush(outputStream)
      fflush(noteStream)
      CapturedOutput.take(
        outputBytes.pointee, from: &outputTaken, to: outputSize.pointee, into: &output)
      CapturedOutput.take(noteBytes.pointee, from: &notesTaken, to: noteSize.pointee, into: &notes)
    }
    return try body()
  }

  /// Closes the streams and frees what they held.
  deinit {
    if let outputStream, let noteStream {
      fclose(outputStream)
      fclose(noteStream)
      free(outputBytes.pointee)
      free(noteBytes.pointee)
    }
    outputBytes.deallocate()
    outputSize.deallocate()
    noteBytes.deallocate()
    noteSize.deallocate()
  }

  /// Appends a stream's bytes from `taken` to `size`, and marks them taken.
  private static func take(
    _ bytes: UnsafeMutablePointer<CChar>?, from taken: inout Int, to size: Int,
    into buffer: inout [UInt8]
  ) {
    guard let bytes, size > taken else { return }
    (bytes + taken).withMemoryRebound(to: UInt8.self, capacity: size - taken) {
      buffer.append(contentsOf: UnsafeBufferPointer(start: $0, count: size - taken))
    }
    taken = size
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
