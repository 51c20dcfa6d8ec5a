// `canImport`: the containers fuzz target compiles these files with the catalogue's in one module.
#if canImport(Refusals)
  import Refusals
#endif

/// Why a file cannot be attached, in one line a person can act on ("truncated PNG"): its kind
/// and its reason from the catalogue (`ImageReason`, English beside Japanese). The reason never
/// names the path, so the caller can put it in front.
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
  /// The refusal in both languages, after the path when there is one.
  public let wording: Wording
  /// The file's path, when the caller put it in front of the reason.
  public let path: String?

  public init(_ kind: Kind, _ cause: ImageReason) {
    self.init(kind, wording: cause.wording, path: nil)
  }

  /// A refusal expected by its English (tests): equal to any of its kind saying those words.
  init(_ kind: Kind, _ english: String) {
    self.init(kind, wording: Wording(english, english), path: nil)
  }

  private init(_ kind: Kind, wording: Wording, path: String?) {
    self.kind = kind
    self.wording = wording
    self.path = path
  }

  /// The English, as an app and `--json` read it.
  public var reason: String { wording.english }

  /// The same refusal naming the file it is about.
  public func about(_ path: String) -> ImageRejection {
    ImageRejection(
      kind, wording: Wording("\(path): \(wording.english)", "\(path): \(wording.japanese)"),
      path: path)
  }

  public var description: String { reason }

  /// The same refusal: the English says it.
  public static func == (a: ImageRejection, b: ImageRejection) -> Bool {
    a.kind == b.kind && a.reason == b.reason
  }

  static func truncated(_ format: ImageFormat, _ flaw: ImageFlaw? = nil) -> ImageRejection {
    ImageRejection(.damaged, .truncated(format: format.displayName, flaw: flaw))
  }

  static func damaged(_ format: ImageFormat, _ flaw: ImageFlaw) -> ImageRejection {
    ImageRejection(.damaged, .damaged(format: format.displayName, flaw: flaw))
  }

  static func unsupported(_ format: ImageFormat, _ flaw: ImageFlaw) -> ImageRejection {
    ImageRejection(.unsupported, .unsupported(format: format.displayName, flaw: flaw))
  }

  /// The system decoder's refusal (`detail`: the library's message).
  public static func cannotDecode(_ format: ImageFormat, _ detail: String) -> ImageRejection {
    ImageRejection(.damaged, .cannotDecode(format: format.displayName, detail: detail))
  }
}
