/// Why a file cannot be attached, in one line a person can act on ("truncated PNG").
/// The reason never names the path, so the caller can put it in front.
public struct ImageRejection: Error, Equatable, Sendable, CustomStringConvertible {
  public enum Kind: Sendable {
    /// Missing, unreadable, empty, a directory, a FIFO or a device.
    case unreadable
    /// Over the byte limit: the datastore's `E413001`.
    case overLimit
    /// Not one of the accepted formats.
    case notAnImage
    /// An accepted format, but cut short or corrupt.
    case damaged
    /// Well-formed, but something the board will not store or cannot show (12-bit JPEG, huge).
    case unsupported
  }

  /// What a refusal of a file (not of its bytes) is, as a value each language words itself.
  public enum Cause: Equatable, Sendable {
    case noFileName, empty, noSuchFile, permissionDenied, pathNotDirectory, directory
    case notRegularFile(what: String?)
    case overLimit(size: Int?, limit: Int)
    case notAnImage
    /// Said only in `reason` (a decoder's detail, a system error).
    case other
  }

  public let kind: Kind
  public let reason: String
  public let cause: Cause
  /// The file's path, when the caller put it in front of the reason.
  public let path: String?

  public init(_ kind: Kind, _ reason: String, cause: Cause = .other, path: String? = nil) {
    self.kind = kind
    self.reason = reason
    self.cause = cause
    self.path = path
  }

  /// The same refusal naming the file it is about.
  public func about(_ path: String) -> ImageRejection {
    ImageRejection(kind, "\(path): \(reason)", cause: cause, path: path)
  }

  public var description: String { reason }

  /// The same refusal: the cause and path only word it.
  public static func == (a: ImageRejection, b: ImageRejection) -> Bool {
    a.kind == b.kind && a.reason == b.reason
  }

  static func truncated(_ format: ImageFormat, _ detail: String? = nil) -> ImageRejection {
    ImageRejection(.damaged, "truncated \(format.displayName)" + (detail.map { " (\($0))" } ?? ""))
  }

  static func damaged(_ format: ImageFormat, _ detail: String) -> ImageRejection {
    ImageRejection(.damaged, "damaged \(format.displayName) (\(detail))")
  }

  static func unsupported(_ format: ImageFormat, _ detail: String) -> ImageRejection {
    ImageRejection(.unsupported, "unsupported \(format.displayName) (\(detail))")
  }
}
