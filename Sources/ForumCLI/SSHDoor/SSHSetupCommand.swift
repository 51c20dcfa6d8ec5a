import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// `ssh-setup`: what OpenSSH needs for the door, printed (a script to read, then run as root) or
/// done with `--apply`: the door's user (no password; its shell is forum, which runs nothing but
/// the door), the board given to it, a root-owned keys command, and sshd's `Match User` block.
enum SSHSetupCommand: BoardlessCommand {
  static let name = "ssh-setup"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "print (or --apply as root) what OpenSSH needs for `ssh board@host`",
      "`ssh board@host` のために OpenSSH に要る設定を表示 (--apply で root として適用)"),
    details: Localized(
      "The door's user has no password and forum as its shell; sshd asks `forum ssh-keys` for "
        + "each offered key and runs only `forum ssh-session` for it, with no forwarding, X11 or "
        + "sftp. --sshd-config prints only sshd's lines. See README, \"Joining over ssh\".",
      "入口のユーザーはパスワードなしでシェルは forum です。sshd は鍵ごとに `forum ssh-keys` に尋ね、"
        + "`forum ssh-session` だけを実行します (転送、X11、sftp なし)。--sshd-config は sshd の設定だけを"
        + "表示します。README の「Joining over ssh」を参照。"),
    parameters: [
      db, user, apply, sshdConfigOnly, state, allow, postsPerMinute, newKeysPerHour, forum,
      keysCommand, configFile,
    ])

  static let db = databaseOption
  static let user = Option<String>(
    "user", value: "NAME",
    help: Localized("the door's Unix user (default board)", "入口の Unix ユーザー (既定 board)"))
  static let apply = Flag(
    "apply", help: Localized("do it (as root), not only print it", "表示だけでなく実行する (root で)"))
  static let sshdConfigOnly = Flag(
    "sshd-config", help: Localized("print only sshd's lines", "sshd の設定だけを表示"))
  static let state = SSHSessionCommand.state
  static let allow = SSHKeysCommand.allow
  static let postsPerMinute = SSHSessionCommand.postsPerMinute
  static let newKeysPerHour = SSHSessionCommand.newKeysPerHour
  static let forum = SSHKeysCommand.forum
  static let keysCommand = Option<FilePath>(
    "keys-command", value: "PATH",
    help: Localized(
      "the root-owned keys command (default /usr/local/lib/forum-ssh/keys-USER)",
      "root 所有の鍵コマンドの置き場所 (既定 /usr/local/lib/forum-ssh/keys-USER)"))
  static let configFile = Option<FilePath>(
    "config-file", value: "PATH",
    help: Localized(
      "sshd's lines (default /etc/ssh/sshd_config.d/forum-USER.conf)",
      "sshd の設定の置き場所 (既定 /etc/ssh/sshd_config.d/forum-USER.conf)"))

  /// This program's own path (`/proc/self/exe`).
  static func ownPath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return "/usr/local/bin/forum" }
    return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Connections from one address that sshd lets log in at once (sshd's default: no limit).
  static let perSourceMaxStartups = 10

  struct Plan {
    let user: String
    let home: String
    let forum: String
    let location: String
    let keysCommand: String
    let configFile: String
    let keysScript: String
    let sshdConfig: String
  }

  static func plan(_ invocation: Invocation, messages: Messages) throws -> Plan {
    guard let location = invocation[db], !location.isEmpty else {
      throw CLIError.usage(messages.usage(info.usage))
    }
    let user = invocation[Self.user] ?? "board"
    guard SSHKeyText.isPlainWord(user), user.utf8.count <= 32, !user.contains("/"),
      user.first?.isLetter == true
    else {
      throw CLIError.usage(messages.doorPlainWord(SafeText.sanitize(user)))
    }
    let forum = invocation[Self.forum]?.path ?? ownPath()
    let keysCommand = invocation[Self.keysCommand]?.path ?? "/usr/local/lib/forum-ssh/keys-\(user)"
    let configFile =
      invocation[Self.configFile]?.path ?? "/etc/ssh/sshd_config.d/forum-\(user).conf"
    var keysWords = [forum, SSHKeysCommand.name]
    if let state = invocation[state]?.path { keysWords += ["--state", state] }
    if let allow = invocation[allow]?.path { keysWords += ["--allow", allow] }
    if let budget = invocation[postsPerMinute]?.count {
      keysWords += ["--posts-per-minute", String(budget)]
    }
    if let budget = invocation[newKeysPerHour]?.count {
      keysWords += ["--new-keys-per-hour", String(budget)]
    }
    // A file's path is in the script's plain commands too; a PostgreSQL URI only here, quoted.
    let fileWords = location.contains("://") ? [] : [location]
    for word in keysWords + fileWords + [keysCommand, configFile]
    where !SSHKeyText.isPlainWord(word) {
      throw CLIError.usage(messages.doorPlainWord(SafeText.sanitize(word)))
    }
    let board = try SSHKeyText.locationWord(location, messages: messages)
    let keysScript = """
      #!/bin/sh
      # sshd's AuthorizedKeysCommand for the forum door (forum ssh-setup): %f %t %k.
      exec \(keysWords.joined(separator: " ")) --db \(board) --fingerprint "$1" --type "$2" --key "$3"

      """
    let sshdConfig = """
      # The forum door (forum ssh-setup): `ssh \(user)@host` reaches the board, nothing else.
      # sshd's own limit (for all its users): connections from one address still logging in.
      PerSourceMaxStartups \(perSourceMaxStartups)
      Match User \(user)
          AuthorizedKeysFile none
          AuthorizedKeysCommand \(keysCommand) %f %t %k
          AuthorizedKeysCommandUser \(user)
          PubkeyAuthentication yes
          PasswordAuthentication no
          KbdInteractiveAuthentication no
          AllowTcpForwarding no
          AllowStreamLocalForwarding no
          AllowAgentForwarding no
          X11Forwarding no
          PermitTunnel no
          PermitUserRC no
          PermitTTY yes
          AcceptEnv LANG LC_*

      """
    return Plan(
      user: user, home: "/var/lib/forum-ssh/\(user)", forum: forum, location: location,
      keysCommand: keysCommand, configFile: configFile, keysScript: keysScript,
      sshdConfig: sshdConfig)
  }

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    let plan = try plan(invocation, messages: messages)
    if invocation[sshdConfigOnly] {
      print(plan.sshdConfig, terminator: "")
      return 0
    }
    guard invocation[apply] else {
      print(script(plan), terminator: "")
      return 0
    }
    guard geteuid() == 0 else { throw CLIError.failed(messages.doorSetupNeedsRoot) }
    try applyPlan(plan, messages: messages)
    print(messages.doorSetupDone(plan.user, plan.configFile))
    return 0
  }

  /// The steps as a script a person reads, then runs as root.
  static func script(_ plan: Plan) -> String {
    let directory = plan.keysCommand.lastIndex(of: "/").map { String(plan.keysCommand[..<$0]) }
    var lines = [
      "# 1. The door's user: no password, forum as its shell (it opens nothing but the board).",
      "useradd --system --create-home --home-dir \(plan.home) --shell \(plan.forum) "
        + "--password '*' \(plan.user)",
    ]
    if !plan.location.contains("://") {
      let folder = plan.location.lastIndex(of: "/").map { String(plan.location[..<$0]) } ?? "."
      lines += [
        "# 2. The board is the door user's (SQLite: the file and its folder, for the journal).",
        "chown \(plan.user): \(folder.isEmpty ? "/" : folder) \(plan.location)",
      ]
    } else {
      lines += [
        "# 2. The board: PostgreSQL's role \(plan.user) (peer authentication on the local socket,",
        "#    or its ~/.pgpass) acts for each key's member as `forum serve` acts for app users:",
        "#    psql as the board's owner: CREATE ROLE \(plan.user) LOGIN IN ROLE forum_member, forum_server;",
      ]
    }
    lines += [
      "# 3. The keys command sshd runs for each key offered: root's, in a folder only root writes.",
      "install -d -o root -g root -m 0755 \(directory ?? "/")",
      "cat > \(plan.keysCommand) <<'END'",
      plan.keysScript + "END",
      "chown root:root \(plan.keysCommand); chmod 0755 \(plan.keysCommand)",
      "# 4. sshd's lines for the door's user, then a check and a reload.",
      "cat > \(plan.configFile) <<'END'",
      plan.sshdConfig + "END",
      "sshd -t && systemctl reload ssh",
      "# Members join with: ssh -t \(plan.user)@HOST",
    ]
    return lines.joined(separator: "\n") + "\n"
  }

  /// Does the script's steps (root): each file written whole and owned as the script says.
  static func applyPlan(_ plan: Plan, messages: Messages) throws {
    if getpwnam(plan.user) == nil {
      try spawn([
        "/usr/sbin/useradd", "--system", "--create-home", "--home-dir", plan.home, "--shell",
        plan.forum, "--password", "*", plan.user,
      ])
    }
    guard let entry = getpwnam(plan.user) else {
      throw CLIError.local(.noSystemUser(name: plan.user))
    }
    let uid = entry.pointee.pw_uid
    let gid = entry.pointee.pw_gid
    if !plan.location.contains("://") {
      let folder = plan.location.lastIndex(of: "/").map { String(plan.location[..<$0]) } ?? "."
      // Never a folder that holds anything but the board (/, /tmp, someone's home): the board
      // gets a folder of its own for the door's user to own.
      var info = stat()
      let base = String(
        plan.location[(plan.location.lastIndex(of: "/") ?? plan.location.startIndex)...].dropFirst()
      )
      let own = Set([base, base + "-wal", base + "-shm", base + "-journal"])
      let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
      let shared =
        !folder.hasPrefix("/") || folder.split(separator: "/").isEmpty
        || (stat(folder, &info) == 0 && info.st_mode & S_ISVTX != 0)
        || names.contains { !own.contains($0) }
      if shared { throw CLIError.failed(messages.doorBoardFolderShared(folder)) }
      for path in [folder, plan.location]
      where access(path, F_OK) == 0 {
        guard chown(path, uid, gid) == 0 else {
          throw CLIError.local(
            .cannotChangeOwner(path: path, error: String(cString: strerror(errno))))
        }
      }
    }
    if let slash = plan.keysCommand.lastIndex(of: "/") {
      let directory = String(plan.keysCommand[..<slash])
      try spawn(["/usr/bin/install", "-d", "-o", "root", "-g", "root", "-m", "0755", directory])
    }
    try write(plan.keysScript, to: plan.keysCommand, mode: 0o755)
    try write(plan.sshdConfig, to: plan.configFile, mode: 0o644)
  }

  private static func write(_ text: String, to path: String, mode: mode_t) throws {
    let temporary = path + ".forum-new"
    unlink(temporary)
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
    guard descriptor >= 0 else {
      throw CLIError.local(.cannotWrite(path: path, error: String(cString: strerror(errno))))
    }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    let ok =
      written == bytes.count && fchown(descriptor, 0, 0) == 0 && fchmod(descriptor, mode) == 0
    close(descriptor)
    guard ok, rename(temporary, path) == 0 else {
      unlink(temporary)
      throw CLIError.local(.cannotWrite(path: path, error: String(cString: strerror(errno))))
    }
  }

  private static func spawn(_ arguments: [String]) throws {
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid = pid_t()
    let error = posix_spawn(&pid, arguments[0], nil, nil, argv, environ)
    guard error == 0 else {
      throw CLIError.local(
        .cannotRun(program: arguments[0], error: String(cString: strerror(error))))
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    guard status == 0 else {
      throw CLIError.local(
        .programFailed(command: arguments.joined(separator: " "), status: status))
    }
  }
}
