import Foundation

/// A throwaway PostgreSQL cluster for the test suites: started once per test process, the first
/// time a test asks for it, and stopped when the process exits. `FORUM_TEST_PG` (a libpq URI of a
/// superuser connection) points the tests at an existing server instead.
///
/// Every test gets its own database and roles (`board()`), so suites can run in parallel.
public final class PostgresTestCluster: @unchecked Sendable {
  /// Directory of the server's Unix socket (nil for an external server reached over TCP).
  public let socketDirectory: String?
  public let host: String
  public let port: Int
  /// The superuser connections are made as.
  public let superuser: String
  private let superuserPassword: String?
  /// Where the server binaries live (psql is used for administration).
  public let binaries: String
  private let lock = NSLock()
  private var counter = 0

  /// Roles in this group log in with peer authentication on the local socket.
  public static let peerGroup = "forum_peer_test"

  private static let started: Result<PostgresTestCluster, PostgresTestClusterError> = {
    do {
      return .success(try PostgresTestCluster.start())
    } catch let error as PostgresTestClusterError {
      return .failure(error)
    } catch {
      return .failure(PostgresTestClusterError("\(error)"))
    }
  }()

  /// The shared cluster; throws (so the test fails, never skips) when it cannot start.
  public static func shared() throws -> PostgresTestCluster {
    try started.get()
  }

  private init(
    socketDirectory: String?, host: String, port: Int, superuser: String,
    superuserPassword: String?, binaries: String
  ) {
    self.socketDirectory = socketDirectory
    self.host = host
    self.port = port
    self.superuser = superuser
    self.superuserPassword = superuserPassword
    self.binaries = binaries
  }

  // MARK: URIs and administration

  /// A libpq URI for `role` on `database`: over the socket when there is one, else TCP.
  public func uri(database: String, role: String, password: String? = nil, tcp: Bool = false)
    -> String
  {
    var parameters = [("user", role)]
    if let password { parameters.append(("password", password)) }
    var authority = ""
    if tcp || socketDirectory == nil {
      authority = "\(tcp ? "127.0.0.1" : host):\(port)"
    } else {
      parameters += [("host", socketDirectory!), ("port", String(port))]
    }
    let query = parameters.map { "\($0.0)=\(PostgresTestCluster.percentEncoded($0.1))" }
    return "postgresql://\(authority)/\(database)?" + query.joined(separator: "&")
  }

  private static func percentEncoded(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~/")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
  }

  /// The superuser's URI on `database`.
  public func superuserURI(database: String = "postgres") -> String {
    uri(database: database, role: superuser, password: superuserPassword)
  }

  /// Runs SQL as the superuser with psql and returns its unaligned output.
  @discardableResult
  public func admin(_ sql: String, database: String = "postgres") throws -> String {
    try PostgresTestCluster.run(
      binaries + "/psql",
      [
        "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", superuserURI(database: database),
        "-c", sql,
      ])
  }

  /// A name no other test in this process (or another process on this server) uses.
  public func uniqueName(_ prefix: String) -> String {
    lock.lock()
    counter += 1
    let number = counter
    lock.unlock()
    return "\(prefix)_\(getpid())_\(number)"
  }

  /// A fresh database owned by a fresh login role; `forum init` is the caller's business.
  public func board(members: [String] = ["alice", "bob"]) throws -> PostgresTestBoard {
    let owner = uniqueName("owner")
    let database = uniqueName("board")
    let password = PostgresTestCluster.randomPassword()
    // CREATEROLE: the owner makes the board's `forum_role_*` roles and grants them.
    try admin("CREATE ROLE \(owner) LOGIN CREATEROLE PASSWORD '\(password)'")
    try admin("CREATE DATABASE \(database) OWNER \(owner)")
    var roles: [String: PostgresTestRole] = [:]
    for member in members {
      roles[member] = try role(member, database: database)
    }
    return PostgresTestBoard(
      cluster: self, database: database,
      owner: PostgresTestRole(
        name: owner, password: password,
        uri: uri(database: database, role: owner, password: password)),
      members: roles)
  }

  /// A login role (not yet a member of anything), named after `label`.
  public func role(_ label: String, database: String) throws -> PostgresTestRole {
    let name = uniqueName(label)
    let password = PostgresTestCluster.randomPassword()
    try admin("CREATE ROLE \(name) LOGIN PASSWORD '\(password)'")
    return PostgresTestRole(
      name: name, password: password, uri: uri(database: database, role: name, password: password))
  }

  static func randomPassword() -> String {
    String(
      (0..<24).map { _ in
        "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789".randomElement()!
      })
  }

  // MARK: Starting and stopping

  private static func start() throws -> PostgresTestCluster {
    let environment = ProcessInfo.processInfo.environment
    if let given = environment["FORUM_TEST_PG"], !given.isEmpty {
      return try external(given)
    }
    let binaries = try locateBinaries()
    let isRoot = getuid() == 0
    sweepAbandoned(stop: { data in
      let stop =
        (isRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []) + [
          binaries + "/pg_ctl", "-D", data, "-m", "immediate", "stop",
        ]
      _ = try? run(stop[0], Array(stop.dropFirst()))
    })
    let base = try makeTemporaryDirectory()
    try String(getpid()).write(toFile: base + "/" + ownerFile, atomically: false, encoding: .utf8)
    let data = base + "/data"
    let socket = base + "/socket"
    try FileManager.default.createDirectory(atPath: socket, withIntermediateDirectories: false)
    // Peer-authenticated test users must reach the socket; the data directory stays 0700.
    chmod(base, 0o755)
    chmod(socket, 0o755)
    let runAs: [String]
    if isRoot {
      guard let account = getpwnam("postgres") else {
        throw PostgresTestClusterError(
          "running as root, but there is no `postgres` Unix user to run the test cluster "
            + "(install the `postgresql` package, or set FORUM_TEST_PG)")
      }
      chown(base, account.pointee.pw_uid, account.pointee.pw_gid)
      chown(socket, account.pointee.pw_uid, account.pointee.pw_gid)
      runAs = ["/usr/sbin/runuser", "-u", "postgres", "--"]
    } else {
      runAs = []
    }
    func asServerUser(_ tool: String, _ arguments: [String]) throws {
      let command = runAs + [binaries + "/" + tool] + arguments
      _ = try run(command[0], Array(command.dropFirst()))
    }
    try asServerUser(
      "initdb",
      [
        "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "--no-instructions",
        "-E", "UTF8", "--locale=C",
      ])
    // Peer for the peer test group, trust on the private socket for everything else (each test
    // connects as many roles), SCRAM passwords over TCP on loopback.
    let hba = """
      local all +\(peerGroup) peer
      local all all trust
      host all all 127.0.0.1/32 scram-sha-256
      """
    try writeAsServerUser(hba + "\n", to: data + "/pg_hba.conf", isRoot: isRoot)
    let port = try freeLoopbackPort()
    let options = [
      "-k", socket, "-c", "listen_addresses=127.0.0.1", "-p", String(port),
      "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
      "-c", "max_connections=200", "-c", "shared_buffers=64MB",
      "-c", "password_encryption=scram-sha-256",
    ].joined(separator: " ")
    try asServerUser(
      "pg_ctl", ["-D", data, "-l", base + "/server.log", "-w", "-t", "60", "-o", options, "start"])
    Teardown.register(
      stop: runAs + [binaries + "/pg_ctl", "-D", data, "-m", "immediate", "stop"], remove: base)
    let cluster = PostgresTestCluster(
      socketDirectory: socket, host: "127.0.0.1", port: port, superuser: "postgres",
      superuserPassword: nil, binaries: binaries)
    try cluster.admin("CREATE ROLE \(peerGroup) NOLOGIN")
    try cluster.admin("CREATE ROLE forum_member NOLOGIN")
    return cluster
  }

  private static func external(_ given: String) throws -> PostgresTestCluster {
    guard let components = URLComponents(string: given),
      components.scheme == "postgresql" || components.scheme == "postgres"
    else {
      throw PostgresTestClusterError("FORUM_TEST_PG must be a postgresql:// URI, not \(given)")
    }
    let query = Dictionary(
      (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
    let socket = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
    let host =
      query["host"] ?? ((components.host?.isEmpty ?? true) ? "127.0.0.1" : components.host!)
    let port = Int(query["port"] ?? "") ?? components.port ?? 5432
    let user = query["user"] ?? components.user ?? "postgres"
    let password = query["password"] ?? components.password
    let cluster = PostgresTestCluster(
      socketDirectory: socket, host: host, port: port, superuser: user,
      superuserPassword: password, binaries: try locateBinaries())
    try cluster.admin(
      """
      DO $$ BEGIN CREATE ROLE \(peerGroup) NOLOGIN;
      EXCEPTION WHEN duplicate_object THEN NULL; END $$;
      DO $$ BEGIN CREATE ROLE forum_member NOLOGIN;
      EXCEPTION WHEN duplicate_object THEN NULL; END $$
      """)
    return cluster
  }

  private static func locateBinaries() throws -> String {
    var candidates = ["/usr/lib/postgresql/15/bin"]
    if let versions = try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql") {
      candidates += versions.sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
    }
    guard
      let found = candidates.first(where: {
        FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl")
      })
    else {
      throw PostgresTestClusterError(
        "PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin: "
          + "install the `postgresql` package (.ci/run does), or set FORUM_TEST_PG")
    }
    return found
  }

  /// The file in a cluster's directory naming the test process that started it.
  public static let ownerFile = "owner.pid"
  public static let directoryPrefix = "forum-test-pg."

  /// Stops and removes the clusters of test processes that died without their `atexit` (killed,
  /// or crashed): each would otherwise keep a server running until the machine restarts.
  /// A directory with no owner file, or whose owner still runs, is left alone.
  public static func sweepAbandoned(
    in parent: String = "/tmp", stop: (_ dataDirectory: String) -> Void
  ) {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
    for name in names where name.hasPrefix(directoryPrefix) {
      let base = parent + "/" + name
      guard
        let text = try? String(contentsOfFile: base + "/" + ownerFile, encoding: .utf8),
        let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), owner > 0,
        kill(owner, 0) == -1, errno == ESRCH
      else { continue }
      if FileManager.default.fileExists(atPath: base + "/data/postmaster.pid") {
        stop(base + "/data")
      }
      try? FileManager.default.removeItem(atPath: base)
    }
  }

  private static func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/\(directoryPrefix)XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else {
      throw PostgresTestClusterError("cannot create a temporary directory: errno \(errno)")
    }
    return String(cString: created)
  }

  private static func writeAsServerUser(_ text: String, to path: String, isRoot: Bool) throws {
    try text.write(toFile: path, atomically: false, encoding: .utf8)
    if isRoot, let account = getpwnam("postgres") {
      chown(path, account.pointee.pw_uid, account.pointee.pw_gid)
    }
  }

  /// A loopback port nobody listens on right now.
  private static func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw PostgresTestClusterError("socket() failed: errno \(errno)") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
      }
    }
    guard bound else { throw PostgresTestClusterError("cannot find a free loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Runs a program to completion; a non-zero exit throws with its output.
  ///
  /// posix_spawn rather than Foundation's Process: Process hands its children a descriptor it
  /// watches for their exit, and the server that `pg_ctl start` leaves running would keep it
  /// open forever. Here the child keeps only stdin, stdout and stderr (a file, not a pipe).
  @discardableResult
  public static func run(_ executable: String, _ arguments: [String]) throws -> String {
    let outputPath = NSTemporaryDirectory() + "/forum-test-pg-output-\(UUID().uuidString)"
    defer { unlink(outputPath) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    // Any other descriptor this process has open without close-on-exec (another test's pipes to
    // its child) must not outlive the call in a daemon: bash closes them all, then runs the tool.
    let closeAll =
      #"cd /proc/self/fd && for fd in *; do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; cd /; exec "$@""#
    let argv =
      (["/bin/bash", "-c", closeAll, "bash", executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
    guard spawned == 0 else {
      throw PostgresTestClusterError("cannot run \(executable): error \(spawned)")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    let exited = status & 0x7f == 0
    let code = (status >> 8) & 0xff
    guard exited && code == 0 else {
      throw PostgresTestClusterError(
        "\(([executable] + arguments).joined(separator: " ")) failed (status \(status)): \(text)")
    }
    return text
  }
}

/// One test's board: a database, its owner and member roles (not yet granted anything).
public struct PostgresTestBoard: Sendable {
  public let cluster: PostgresTestCluster
  public let database: String
  public let owner: PostgresTestRole
  public let members: [String: PostgresTestRole]

  public subscript(member: String) -> PostgresTestRole { members[member]! }

  /// Drops the database (the roles stay: they are cheap and unique).
  public func remove() {
    _ = try? cluster.admin("DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
  }
}

public struct PostgresTestRole: Sendable {
  public let name: String
  public let password: String
  /// Over the socket (or the external server's host).
  public let uri: String
}

public struct PostgresTestClusterError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// Stops the cluster and removes its files when the test process exits.
private enum Teardown {
  nonisolated(unsafe) static var stopCommand: [String] = []
  nonisolated(unsafe) static var directory: String?

  static func register(stop: [String], remove: String) {
    stopCommand = stop
    directory = remove
    atexit {
      if !Teardown.stopCommand.isEmpty {
        _ = try? PostgresTestCluster.run(
          Teardown.stopCommand[0], Array(Teardown.stopCommand.dropFirst()))
      }
      if let directory = Teardown.directory {
        try? FileManager.default.removeItem(atPath: directory)
      }
    }
  }
}
