import CSpawn
import Foundation
import PostgresTestCluster
import Testing

/// A real OpenSSH server on a loopback port for the ssh door: its own directory (root-owned,
/// 0755, as sshd wants for the keys command and every folder above it, so not under /tmp), host
/// key, `-f` config and the door's files made by `forum ssh-setup --apply`; a Unix user the tests
/// share (made with useradd when missing). Needs root, as CI has: otherwise it fails saying so.
final class SSHDoorFixture {
  static let user = "forumsshtest"
  static let testsRoot = "/var/lib/forum-ssh-tests"

  let forum: ForumFixture
  let directory: String
  let board: String
  let state: String
  let port: Int
  /// With `postgres`: the board's database on the test cluster (its owner ran `forum init`).
  let postgresBoard: PostgresTestBoard?
  private let sshd: pid_t

  /// `postgres`: the board is a PostgreSQL database reached over the cluster's socket with peer
  /// authentication, the door user's role granted `forum_member` and `forum_server` (as
  /// `ssh-setup` tells the owner), so each key's member is an app user that role acts for.
  /// `ownerlessBoard`: an SQLite board nobody has opened yet (else its owner opens it first).
  init(
    postsPerMinute: Int? = nil, boardOwnedByRoot: Bool = false, postgres: Bool = false,
    ownerlessBoard: Bool = false
  ) throws {
    guard getuid() == 0 else {
      throw ForumTestError(
        "the ssh door tests start sshd and switch to a Unix user: run them as root (CI does)")
    }
    for tool in ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
      throw ForumTestError("\(tool) is missing: Scripts/setup test installs openssh-server/client")
    }
    forum = try ForumFixture()
    try SSHDoorFixture.makeRootDirectory(SSHDoorFixture.testsRoot)
    directory = SSHDoorFixture.testsRoot + "/" + UUID().uuidString.lowercased().prefix(12)
    try SSHDoorFixture.makeRootDirectory(directory)
    if postgres {
      let cluster = try PostgresTestCluster.shared()
      guard let socket = cluster.socketDirectory else {
        throw ForumTestError("the ssh door on PostgreSQL needs the test cluster's local socket")
      }
      let database = try cluster.board(members: [])
      postgresBoard = database
      let initialized = try forum.run(["init"], profile: nil, database: database.owner.uri)
      guard initialized.status == 0 else { throw ForumTestError("init: \(initialized.summary)") }
      let user = SSHDoorFixture.user
      try cluster.admin(
        """
        DO $$ BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '\(user)') THEN
            CREATE ROLE \(user) LOGIN;
          END IF;
        END $$;
        GRANT forum_member, forum_server, \(PostgresTestCluster.peerGroup) TO \(user);
        """)
      // No user and no password: peer authentication names the door's Unix user.
      board = "postgresql:///\(database.database)?host=\(socket)&port=\(cluster.port)"
    } else {
      postgresBoard = nil
      board = directory + "/board/board.sqlite"
    }
    state = directory + "/state"
    // sshd's privilege separation directory.
    try? FileManager.default.createDirectory(
      atPath: "/run/sshd", withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o755])
    try SSHDoorFixture.ensureUser(shell: forum.binary)
    for folder in [directory + "/board", state] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    var setup = [
      "ssh-setup", "--apply", "--db", board, "--user", SSHDoorFixture.user, "--state", state,
      "--forum", forum.binary, "--keys-command", directory + "/keys",
      "--config-file", directory + "/door.conf",
    ]
    if let postsPerMinute { setup += ["--posts-per-minute", String(postsPerMinute)] }
    let applied = try ForumFixture.launch(
      forum.binary, arguments: setup, environment: forum.environment(), input: Data(),
      timeout: 60)
    guard applied.status == 0 else { throw ForumTestError("ssh-setup --apply: \(applied.summary)") }
    try SSHDoorFixture.chown(state, to: SSHDoorFixture.user)
    // An SQLite board's first user is its owner, made on the host (the door makes no first
    // user: the first stranger would own the board).
    if !postgres && !ownerlessBoard {
      let owner = try forum.run(["whoami"], profile: "boardowner", database: board)
      guard owner.status == 0 else { throw ForumTestError("the owner: \(owner.summary)") }
      try SSHDoorFixture.chown(directory + "/board", to: SSHDoorFixture.user)
    }
    if boardOwnedByRoot {
      try SSHDoorFixture.chown(directory + "/board", to: "root")
    }
    try SSHDoorFixture.run(
      "/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", directory + "/hostkey"])
    port = try SSHDoorFixture.freePort()
    let config = """
      Port \(port)
      ListenAddress 127.0.0.1
      HostKey \(directory)/hostkey
      PidFile \(directory)/sshd.pid
      UsePAM no
      StrictModes yes
      LogLevel VERBOSE
      AuthorizedKeysFile none
      PasswordAuthentication no
      KbdInteractiveAuthentication no
      Include \(directory)/door.conf

      """
    try config.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
    // posix_spawn, not Process: sshd must not hold what Foundation watches to see a child end.
    sshd = try SSHDoorFixture.spawn(
      ["/usr/sbin/sshd", "-D", "-e", "-f", directory + "/sshd_config"],
      log: directory + "/sshd.log")
    let deadline = Date().addingTimeInterval(20)
    while !SSHDoorFixture.accepts(port) {
      guard Date() < deadline, kill(sshd, 0) == 0 else {
        throw ForumTestError("sshd did not start: \(sshdLog)")
      }
      usleep(20_000)
    }
  }

  /// The board's owner on the host (SQLite: its first user, profile `boardowner`), past the
  /// door; the board's folder is given back to the door's user after (root made its files).
  func asOwner(_ arguments: [String]) throws -> RunResult {
    let result = try forum.run(arguments, profile: "boardowner", database: board)
    try SSHDoorFixture.chown(directory + "/board", to: SSHDoorFixture.user)
    return result
  }

  deinit {
    kill(sshd, SIGTERM)
    var status: Int32 = 0
    waitpid(sshd, &status, 0)
    try? FileManager.default.removeItem(atPath: directory)
    postgresBoard?.remove()
  }

  var sshdLog: String {
    (try? String(contentsOfFile: directory + "/sshd.log", encoding: .utf8)) ?? ""
  }

  /// A new client key (a new person); returns its private key's path.
  func makeKey(_ name: String) throws -> String {
    let path = directory + "/client-" + name
    try SSHDoorFixture.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path])
    return path
  }

  /// The key's SHA256 fingerprint, as sshd computes it.
  func fingerprint(_ key: String) throws -> String {
    let result = try ForumFixture.launch(
      "/usr/bin/ssh-keygen", arguments: ["-l", "-f", key + ".pub"], environment: [:],
      input: Data(), timeout: 30)
    guard let word = result.stdout.split(separator: " ").dropFirst().first else {
      throw ForumTestError("ssh-keygen -l: \(result.summary)")
    }
    return String(word)
  }

  /// The ssh client's words to reach the door as `key`.
  func sshArguments(_ key: String, options: [String] = []) -> [String] {
    [
      "-F", "/dev/null", "-i", key, "-p", String(port), "-o", "IdentitiesOnly=yes",
      "-o", "UserKnownHostsFile=\(directory)/known_hosts", "-o", "StrictHostKeyChecking=no",
      "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
    ] + options + ["\(SSHDoorFixture.user)@127.0.0.1"]
  }

  /// `ssh … board@127.0.0.1 COMMAND…` with `input` on its stdin.
  func ssh(
    _ key: String, _ command: [String], options: [String] = [], input: Data = Data(),
    environment: [String: String] = [:], timeout: TimeInterval = 60
  ) throws -> RunResult {
    var env = ["PATH": "/usr/bin:/bin", "HOME": forum.root + "/home", "LANG": "C"]
    env.merge(environment) { _, new in new }
    return try ForumFixture.launch(
      // `--`: OpenSSH reads options after the destination too (`ssh host --json list`).
      "/usr/bin/ssh", arguments: ["-T"] + sshArguments(key, options: options) + ["--"] + command,
      environment: env, input: input, timeout: timeout)
  }

  /// The door's name for the key's member (`key-` and the fingerprint, file-name safe).
  func memberName(_ key: String) throws -> String {
    "key-"
      + (try fingerprint(key)).dropFirst(7).map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }
  }

  /// `forum COMMAND…` run by the door's Unix user as the key's member, past the door (no
  /// `ssh-session`): the path a member would take around the door, which the board's engine
  /// must hold as the door does.
  func direct(_ key: String, _ command: [String]) throws -> RunResult {
    let name = try memberName(key)
    let home = state + "/keys/" + name
    return try ForumFixture.launch(
      "/usr/sbin/runuser",
      arguments: [
        "-u", SSHDoorFixture.user, "--", "/usr/bin/env", "-i", "HOME=\(home)",
        "XDG_CONFIG_HOME=\(home)/config", "XDG_STATE_HOME=\(home)/state",
        "XDG_DATA_HOME=\(home)/data", "PATH=/usr/bin:/bin", "LANG=C", forum.binary, "--db", board,
        "--profile", name,
      ] + command, environment: ["PATH": "/usr/sbin:/usr/bin:/bin"], input: Data(), timeout: 60)
  }

  /// The member's handle (`whoami --json` through the door), with its `@`.
  func handle(_ key: String) throws -> String {
    let result = try ssh(key, ["--json", "whoami"])
    guard let name = try result.json()["userName"] as? String else {
      throw ForumTestError("whoami: \(result.summary)")
    }
    return "@" + name
  }

  // MARK: Set-up

  /// Starts `arguments` with stdin from /dev/null and stdout and stderr into `log`.
  static func spawn(_ arguments: [String], log: String) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    cspawn_addclosefrom(&actions, 3)  // none of the test process's other descriptors
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = [strdup("PATH=/usr/sbin:/usr/bin:/bin"), nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid = pid_t()
    let error = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
    guard error == 0 else { throw ForumTestError("cannot start \(arguments[0]): \(error)") }
    return pid
  }

  static func makeRootDirectory(_ path: String) throws {
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
      throw ForumTestError("mkdir \(path): \(String(cString: strerror(errno)))")
    }
    guard Glibc.chown(path, 0, 0) == 0, chmod(path, 0o755) == 0 else {
      throw ForumTestError("chown/chmod \(path): \(String(cString: strerror(errno)))")
    }
  }

  /// The shared test user, its shell the forum under test (as ssh-setup makes the door's user).
  static let userLock = NSLock()
  static func ensureUser(shell: String) throws {
    userLock.lock()
    defer { userLock.unlock() }
    if getpwnam(user) == nil {
      try run(
        "/usr/sbin/useradd",
        [
          "--system", "--no-create-home", "--home-dir", testsRoot, "--shell", shell,
          "--password", "*", user,
        ])
    } else if let entry = getpwnam(user), String(cString: entry.pointee.pw_shell) != shell {
      try run("/usr/sbin/usermod", ["--shell", shell, "--home", testsRoot, user])
    }
  }

  static func chown(_ path: String, to name: String) throws {
    try run("/bin/chown", ["-R", "\(name):", path])
  }

  static func run(_ tool: String, _ arguments: [String]) throws {
    let result = try ForumFixture.launch(
      tool, arguments: arguments, environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"],
      input: Data(), timeout: 60)
    guard result.status == 0 else { throw ForumTestError("\(tool): \(result.summary)") }
  }

  static func freePort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
    }
    guard bound == 0 else { throw ForumTestError("bind: \(errno)") }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  static func accepts(_ port: Int) -> Bool {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}
