import Datastore
import Forum

/// Why a command did not do what was asked. Each maps to one exit status.
enum CLIError: Error {
  /// The command was typed wrong (exit 2).
  case usage(String)
  /// The datastore refused or failed (exit 1, 3 or 4 by its code).
  case datastore(DatastoreError)
  /// An image could not be attached or shown (exit 1, or E413001 when too large).
  case image(ImageRejection)
  /// An image decoder's C library could not be loaded: what to install (exit 1).
  case imageLibrary(ImageLibraryUnavailable)
  /// A file or program on this machine failed (`LocalReason`, exit 1).
  case local(LocalReason)
  /// Anything else that failed, already said in words (exit 1).
  case failed(String)
  /// The person answered no, or input ended mid-command; nothing was saved (exit 1).
  case cancelled
  /// Ctrl-C stopped the work; nothing was saved (exit 130).
  case interrupted
  /// A page or other thing past what exists, already said in words (exit 4).
  case notFound(String)

  var exitStatus: Int32 {
    switch self {
    case .usage: return 2
    case .datastore(let error):
      switch error.code {
      case .authentication, .noAccess: return 3
      case .notFound: return 4
      default: return 1
      }
    case .image, .imageLibrary, .local, .failed, .cancelled: return 1
    case .interrupted: return 130
    case .notFound: return 4
    }
  }

  /// The backend's code and message for `--json` errors.
  var codeAndMessage: (code: String, message: String) {
    switch self {
    case .datastore(let error):
      return (error.code.rawValue, error.message)
    case .image(let rejection):
      let error = rejection.asDatastoreError
      return (error.code.rawValue, error.message)
    case .imageLibrary(let missing):
      return (
        ErrorCode.systemError.rawValue, Messages(japanese: false).imageLibraryUnavailable(missing)
      )
    case .usage(let text), .failed(let text): return (ErrorCode.invalid.rawValue, text)
    case .local(let reason): return (ErrorCode.invalid.rawValue, reason.wording.english)
    case .cancelled: return (ErrorCode.invalid.rawValue, "cancelled")
    case .interrupted: return (ErrorCode.systemError.rawValue, "interrupted")
    case .notFound: return (ErrorCode.notFound.rawValue, DatastoreError(.notFound).message)
    }
  }

  init(_ error: Error) {
    switch error {
    case let error as CLIError: self = error
    case let error as DatastoreError: self = .datastore(error)
    case let error as ImageRejection: self = .image(error)
    case let error as ImageLibraryUnavailable: self = .imageLibrary(error)
    case is Interrupted: self = .interrupted
    default: self = .failed(String(describing: error))
    }
  }
}

extension ImageRejection {
  /// The backend error this refusal amounts to: over the limit is E413001, the rest E400002.
  var asDatastoreError: DatastoreError {
    if kind == .overLimit { return DatastoreError(.fileTooLarge, detail: reason) }
    return DatastoreError(.invalid, field: "image", detail: reason)
  }
}
