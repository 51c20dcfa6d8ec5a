import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// `ssh-keys`: sshd's `AuthorizedKeysCommand` for the door's user. Given the offered key's
/// fingerprint, type and base64 (`%f %t %k`, from sshd, never from the client's words), it prints
/// the one authorized_keys line that lets the key in with nothing but `ssh-session` for its
/// fingerprint (`restrict,pty`: no forwarding of any kind, no X11, no user rc; a forced command,
/// so no shell and no sftp). With `--allow FILE`, only fingerprints listed there get a line.
enum SSHKeysCommand: BoardlessCommand {
  static let name = "ssh-keys"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "sshd's AuthorizedKeysCommand for the ssh door (see ssh-setup)",
      "ssh の入口のための sshd の AuthorizedKeysCommand (ssh-setup を参照)"),
    details: Localized(
      "Prints restrict,pty,command=\"forum ssh-session --db BOARD --key FINGERPRINT\" and the key, "
        + "for any key or only those listed in --allow's file (one SHA256:… a line, # comments).",
      "restrict,pty,command=\"forum ssh-session --db BOARD --key FINGERPRINT\" と鍵を出力します。"
        + "--allow のファイルがあればそこにある鍵 (1 行に SHA256:…、# はコメント) だけです。"),
    parameters: [db, fingerprint, type, key, allow, state, postsPerMinute, newKeysPerHour, forum])

  static let db = databaseOption
  static let fingerprint = Option<SSHFingerprint>(
    "fingerprint", help: Localized("sshd's %f", "sshd の %f"), required: true)
  static let type = Option<String>(
    "type", value: "TYPE", help: Localized("sshd's %t", "sshd の %t"), required: true)
  static let key = Option<String>(
    "key", value: "BASE64", help: Localized("sshd's %k", "sshd の %k"), required: true)
  static let allow = Option<FilePath>(
    "allow", value: "FILE",
    help: Localized(
      "only the fingerprints listed in FILE may come in", "FILE にあるフィンガープリントだけを入れる"))
  static let state = SSHSessionCommand.state
  static let postsPerMinute = SSHSessionCommand.postsPerMinute
  static let newKeysPerHour = SSHSessionCommand.newKeysPerHour
  static let forum = Option<FilePath>(
    "forum", value: "PATH",
    help: Localized(
      "the forum program the forced command runs (default: this one)",
      "強制コマンドが実行する forum (既定: このプログラム)"))

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    guard let fingerprint = invocation[fingerprint], let type = invocation[type],
      let key = invocation[key], let location = invocation[db]
    else { throw CLIError.usage(messages.usage(info.usage)) }
    guard SSHKeyText.isType(type), SSHKeyText.isBlob(key) else {
      throw CLIError.usage(messages.badFingerprint(SafeText.sanitize(String(type.prefix(40)))))
    }
    if let list = invocation[allow]?.path {
      let text = (try? String(contentsOfFile: list, encoding: .utf8)) ?? ""
      let allowed = text.split(separator: "\n").map { line in
        String(line.prefix { $0 != "#" }).split(separator: " ").first.map(String.init) ?? ""
      }
      guard allowed.contains(fingerprint.text) else { return 0 }
    }
    let command = try sessionCommand(
      forum: invocation[forum]?.path ?? SSHSetupCommand.ownPath(), location: location,
      key: fingerprint, state: invocation[state]?.path,
      postsPerMinute: invocation[postsPerMinute]?.count,
      newKeysPerHour: invocation[newKeysPerHour]?.count, messages: messages)
    print("restrict,pty,command=\"\(command)\" \(type) \(key)")
    return 0
  }

  /// The forced command for `key`: every word plain (checked) but the board's location, which is
  /// single-quoted when it is not (`SSHKeyText.locationWord`), so neither sshd's quoting, sh nor
  /// the door's shell can read it another way.
  static func sessionCommand(
    forum: String, location: String, key: SSHFingerprint, state: String?, postsPerMinute: Int?,
    newKeysPerHour: Int? = nil, messages: Messages
  ) throws -> String {
    var words = [forum, SSHSessionCommand.name, "--key", key.text]
    if let state { words += ["--state", state] }
    if let postsPerMinute { words += ["--posts-per-minute", String(postsPerMinute)] }
    if let newKeysPerHour { words += ["--new-keys-per-hour", String(newKeysPerHour)] }
    for word in words where !SSHKeyText.isPlainWord(word) {
      throw CLIError.usage(messages.doorPlainWord(SafeText.sanitize(word)))
    }
    let board = try SSHKeyText.locationWord(location, messages: messages)
    return (words.prefix(2) + ["--db", board] + words.dropFirst(2)).joined(separator: " ")
  }
}
