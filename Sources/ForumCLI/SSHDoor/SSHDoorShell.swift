#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// forum as the door user's shell: sshd runs the shell with `-c` and the forced command that
/// `ssh-keys` wrote. Only `forum ssh-session …` runs; any other command, or a login without one,
/// gets one line.
enum SSHDoorShell {
  static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
    let messages = Messages(
      japanese: Terminal(environment: environment, noColorFlag: true).japanese)
    guard arguments.count == 2 else { return refuse(messages) }
    let words = CommandWords(line: arguments[1]).words
    let values = words.compactMap(\.value)
    guard values.count == words.count, values.count >= 2,
      values[0] == SSHSetupCommand.ownPath() || values[0].hasSuffix("/forum")
        || values[0] == "forum",
      values[1] == SSHSessionCommand.name
    else { return refuse(messages) }
    return ForumMain.run(arguments: Array(values.dropFirst()), environment: environment)
  }

  static func refuse(_ messages: Messages) -> Int32 {
    ForumMain.writeError("forum: " + messages.doorShellOnly)
    return 1
  }
}

extension ForumMain {
  /// forum started as a login shell: the door's user reached without the door. Nothing runs.
  public static func refuseLoginShell() -> Int32 {
    SSHDoorShell.refuse(Messages(japanese: false))
  }
}
