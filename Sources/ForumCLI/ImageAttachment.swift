import Datastore
import Forum
import Foundation

/// Getting images from disk onto the board and back.
enum ImageAttachment {
  /// Reads, checks and cleans an image for attaching: refused unless it is a PNG, JPEG, GIF or
  /// WebP that we can also decode, so nothing is stored that would not preview.
  static func load(path: String, limit: Int) throws -> PreparedImage {
    let data = try ImageFile.read(path: path, limit: limit)
    let image = try ImagePreparer.prepare(data)
    try ImageDecoder.verify(image)
    return image
  }

  /// Writes `bytes` to `path` through a temporary file and a rename, so a failed write leaves
  /// nothing behind. An existing file is kept unless `overwrite`.
  static func save(_ bytes: [UInt8], to rawPath: String, overwrite: Bool) throws {
    let path = ImageFile.expandTilde(rawPath)
    let shown = SafeText.sanitize(rawPath)
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
      if isDirectory.boolValue { throw CLIError.failed("\(shown) is a directory") }
      if !overwrite { throw CLIError.failed("\(shown) already exists; add --force to replace it") }
    }
    let directory = (path as NSString).deletingLastPathComponent
    let temporary =
      (directory.isEmpty ? "." : directory)
      + "/.forum-save-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw CLIError.failed("cannot write \(shown): \(String(cString: strerror(errno)))")
    }
    var ok = true
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 && errno == EINTR { continue }
        if written <= 0 {
          ok = false
          return
        }
        offset += written
      }
    }
    ok = fsync(descriptor) == 0 && ok
    close(descriptor)
    guard ok, rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw CLIError.failed("cannot write \(shown): \(reason)")
    }
  }
}
