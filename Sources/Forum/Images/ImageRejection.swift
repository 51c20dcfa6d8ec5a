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

  public let kind: Kind
  public let reason: String

  public init(_ kind: Kind, _ reason: String) {
    self.kind = kind
    self.reason = reason
  }

  public var description: String { reason }

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
