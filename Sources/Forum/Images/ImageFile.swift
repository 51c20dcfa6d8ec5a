// `canImport`: the containers fuzz target compiles these files with the catalogue's in one module.
#if canImport(Refusals)
  import Refusals
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Reads a file a person names for attaching, refusing anything that is not a plain readable file
/// before reading a byte, so a FIFO cannot hang the board and `/dev/zero` cannot fill memory.
public enum ImageFile {
  /// The bytes of the regular file at `path` (a leading `~` is expanded), at most `limit` of them.
  /// Throws `ImageRejection` (kind `.overLimit` above `limit`, `.unreadable` otherwise).
  public static func read(path: String, limit: Int) throws -> Data {
    let expanded = expandTilde(path)
    guard !expanded.isEmpty else {
      throw ImageRejection(.unreadable, .noFileName)
    }
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
    let fd = open(expanded, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { throw rejection(errno: errno) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw rejection(errno: errno) }
    if let refusal = refusal(mode: info.st_mode) { throw refusal }
    // The size is only a hint (files can grow, /proc files claim 0), so reading stops past limit.
    if Int(info.st_size) > limit { throw overLimit(limit, size: Int(info.st_size)) }
    let bytes = try readAll(fd, upTo: limit + 1, expected: Int(info.st_size))
    if bytes.isEmpty { throw ImageRejection(.unreadable, .empty) }
    if bytes.count > limit { throw overLimit(limit, size: nil) }
    return Data(bytes)
  }

  /// The picture on standard input (`--image -`), read to its end or to just past `limit`,
  /// refused as a file would be when empty or too large.
  public static func readStandardInput(limit: Int) throws -> Data {
    let bytes = try readAll(STDIN_FILENO, upTo: limit + 1, expected: 0)
    if bytes.isEmpty { throw ImageRejection(.unreadable, .empty) }
    if bytes.count > limit { throw overLimit(limit, size: nil) }
    return Data(bytes)
  }

  /// `84 KB`, `1.2 MB`: sizes as the board shows them, in binary units like the 5 MB limit.
  public static func formatSize(_ bytes: Int) -> String { ImageReason.formatSize(bytes) }

  /// `~` and `~/x` become the home directory, `~name/x` that user's; other paths are unchanged.
  public static func expandTilde(_ path: String) -> String {
    guard path.hasPrefix("~") else { return path }
    let slash = path.firstIndex(of: "/") ?? path.endIndex
    let user = String(path[path.index(after: path.startIndex)..<slash])
    let home: String?
    if user.isEmpty {
      home =
        ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        ?? getpwuid(getuid()).flatMap { String(cString: $0.pointee.pw_dir) }
    } else {
      home = getpwnam(user).flatMap { String(cString: $0.pointee.pw_dir) }
    }
    guard let home else { return path }
    return home + path[slash...]
  }

  private static func refusal(mode: mode_t) -> ImageRejection? {
    switch mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR: return ImageRejection(.unreadable, .directory)
    case S_IFIFO: return notRegular("FIFO")
    case S_IFCHR, S_IFBLK: return notRegular("device")
    case S_IFSOCK: return notRegular("socket")
    default: return notRegular(nil)
    }
  }

  private static func notRegular(_ what: String?) -> ImageRejection {
    ImageRejection(.unreadable, .notRegularFile(what: what))
  }

  private static func overLimit(_ limit: Int, size: Int?) -> ImageRejection {
    ImageRejection(.overLimit, .overLimit(size: size, limit: limit))
  }

  private static func rejection(errno code: Int32) -> ImageRejection {
    switch code {
    case ENOENT: return ImageRejection(.unreadable, .noSuchFile)
    case EACCES, EPERM:
      return ImageRejection(.unreadable, .permissionDenied)
    case ENOTDIR:
      return ImageRejection(.unreadable, .pathNotDirectory)
    case ENXIO: return notRegular(nil)
    default:
      let message = String(cString: strerror(code))
      return ImageRejection(.unreadable, .system(message))
    }
  }

  /// Reads until end of file or `maximum` bytes, whichever comes first.
  private static func readAll(_ fd: Int32, upTo maximum: Int, expected: Int) throws -> [UInt8] {
    var bytes = [UInt8]()
    bytes.reserveCapacity(min(max(expected, 0) + 1, maximum))
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while bytes.count < maximum {
      let wanted = min(chunk.count, maximum - bytes.count)
      let got = chunk.withUnsafeMutableBytes { readChunk(fd, $0.baseAddress, wanted) }
      if got == 0 { break }
      if got < 0 {
        if errno == EINTR { continue }
        throw rejection(errno: errno)
      }
      bytes.append(contentsOf: chunk[0..<got])
    }
    return bytes
  }
}

/// `read(2)`, reachable under a name `ImageFile.read` does not shadow.
private func readChunk(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(fd, buffer, count)
}
