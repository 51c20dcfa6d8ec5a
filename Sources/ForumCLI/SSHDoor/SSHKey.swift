#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A public key's SHA-256 fingerprint as sshd gives it (`%f`: `SHA256:` and 43 characters of
/// unpadded base64). It names a member of the board through the ssh door; anything else, or
/// anything with other characters, is refused before a file or the board is touched.
struct SSHFingerprint: Equatable, Hashable, ArgumentValue {
  let text: String

  static var valueName: String { "SHA256:…" }

  init(parsing word: String, messages: Messages) throws {
    guard let fingerprint = SSHFingerprint(word) else {
      throw CLIError.usage(messages.badFingerprint(SafeText.sanitize(String(word.prefix(80)))))
    }
    self = fingerprint
  }

  init?(_ word: String) {
    let body = word.utf8.dropFirst(7)
    guard word.hasPrefix("SHA256:"), body.count == 43, body.allSatisfy(SSHFingerprint.isBase64)
    else { return nil }
    text = word
  }

  /// The profile and directory name of the key's member: `key-` and the base64 made safe for a
  /// file name (`+` → `-`, `/` → `_`), which the profile store accepts and can be turned back.
  var memberName: String {
    "key-"
      + String(
        text.dropFirst(7).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
  }

  /// The fingerprint a member's directory name stands for; nil for any other name.
  init?(memberName name: String) {
    guard name.hasPrefix("key-") else { return nil }
    self.init("SHA256:" + String(name.dropFirst(4).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }))
  }

  static func isBase64(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
      || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "+")
      || byte == UInt8(ascii: "/")
  }
}

/// What sshd passes the keys command besides the fingerprint: the key's type (`%t`) and its
/// base64 (`%k`), checked to be only what they claim before they go into an authorized_keys line.
enum SSHKeyText {
  static func isType(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 64
      && text.utf8.allSatisfy {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
          || $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: ".")
      }
  }

  static func isBlob(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 16_384
      && text.utf8.allSatisfy { SSHFingerprint.isBase64($0) || $0 == UInt8(ascii: "=") }
  }

  /// A word that goes into the forced command unquoted: a path or a board location made of
  /// characters no shell treats specially.
  static func isPlainWord(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 1024
      && text.utf8.allSatisfy {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
          || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
          || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
          || "/._-+:@%=,~".utf8.contains($0)
      }
  }

  /// A board location for the forced command and the keys script: printable ASCII with no blank,
  /// quote or backslash (a `postgresql://…?host=/run/postgresql&port=5432` URI or a path), so
  /// that in single quotes neither sh, sshd's `command="…"` nor the door's shell reads it another
  /// way. A location holding a password is refused by `locationWord`.
  static func isLocation(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 1024
      && text.utf8.allSatisfy {
        $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "'") && $0 != UInt8(ascii: "\"")
          && $0 != UInt8(ascii: "\\")
      }
  }

  /// True when a `postgresql://` location carries a password (`user:pw@` or `password=`).
  static func holdsPassword(_ location: String) -> Bool {
    let parts = location.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else { return false }
    let rest = parts[1]
    let authority = rest.prefix { $0 != "/" && $0 != "?" }
    if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") { return true }
    guard let query = rest.firstIndex(of: "?") else { return false }
    return rest[rest.index(after: query)...].split(separator: "&").contains {
      $0.lowercased().hasPrefix("password=")
    }
  }

  /// The location as one word for sh and the door's shell: as it is when plain, else in single
  /// quotes; refused in one line when it cannot be quoted safely or holds a password.
  static func locationWord(_ location: String, messages: Messages) throws -> String {
    guard !holdsPassword(location) else { throw CLIError.usage(messages.doorLocationPassword) }
    guard isLocation(location) else {
      let shown = SafeText.sanitize(String(location.prefix(200)))
      throw CLIError.usage(messages.doorBadLocation(shown))
    }
    return isPlainWord(location) ? location : "'" + location + "'"
  }
}
