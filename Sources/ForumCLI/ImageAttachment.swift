import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// Getting images from disk onto the board and back.
enum ImageAttachment {
  /// Reads, checks and cleans an image for attaching: refused unless it is a PNG, JPEG, GIF or
  /// WebP that we can also decode, so nothing is stored that would not preview. A refusal names
  /// the path.
  static func load(path: String, limit: Int) throws -> PreparedImage {
    do {
      let data =
        path == "-"
        ? try ImageFile.readStandardInput(limit: limit)
        : try ImageFile.read(path: path, limit: limit)
      let image = try ImagePreparer.prepare(data)
      try ImageDecoder.verify(image)
      return image
    } catch let rejection as ImageRejection {
      throw rejection.about(path == "-" ? "standard input" : SafeText.sanitize(path))
    }
  }

  /// The path in an answer to the image question, as a person types, completes or pastes it:
  /// readline's trailing space dropped, quotes and backslash escapes (a dragged file) resolved.
  /// Nil for an empty answer.
  static func typedPath(_ answer: String) -> String? {
    let trimmed = answer.trimmingSpaces()
    guard !trimmed.isEmpty else { return nil }
    guard trimmed.contains(where: { $0 == "'" || $0 == "\"" || $0 == "\\" }) else {
      return trimmed
    }
    let words = CommandWords(line: trimmed).words
    if words.count == 1, let value = words[0].value { return value }
    return trimmed
  }

  /// Writes the bytes to standard output (`--save -`), for a pipe.
  static func writeToStandardOutput(_ bytes: [UInt8]) throws {
    fflush(stdout)
    guard writeAll(bytes, to: STDOUT_FILENO) else {
      throw CLIError.local(.cannotWriteStandardOutput(error: String(cString: strerror(errno))))
    }
  }

  /// Writes `bytes` to `path` through a temporary file and a rename, so a failed write leaves
  /// nothing behind. An existing file is kept unless `overwrite`.
  static func save(_ bytes: [UInt8], to rawPath: String, overwrite: Bool) throws {
    let path = ImageFile.expandTilde(rawPath)
    let shown = SafeText.sanitize(rawPath)
    if path.isEmpty || path.hasSuffix("/") {
      throw CLIError.local(.namesDirectory(path: shown))
    }
    var info = stat()
    if stat(path, &info) == 0 {
      if info.st_mode & S_IFMT == S_IFDIR { throw CLIError.local(.isDirectory(path: shown)) }
      if !overwrite { throw CLIError.local(.alreadyExists(path: shown)) }
    }
    // Not NSString.deletingLastPathComponent: it traps on some short relative paths.
    let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "./"
    let temporary =
      directory + ".forum-save-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw CLIError.local(.cannotWrite(path: shown, error: String(cString: strerror(errno))))
    }
    var ok = writeAll(bytes, to: descriptor)
    ok = fsync(descriptor) == 0 && ok
    close(descriptor)
    guard ok, rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw CLIError.local(.cannotWrite(path: shown, error: reason))
    }
  }

  private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return false }
        offset += written
      }
      return true
    }
  }
}
