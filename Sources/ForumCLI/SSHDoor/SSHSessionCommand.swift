import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// A member's run through the ssh door: whose key (from sshd, never from the client), where the
/// door keeps its state, and the posting budget where the board sets none (`mod
/// posts-per-minute`, the board's own, comes first).
struct SSHDoor {
  let key: SSHFingerprint
  let state: SSHDoorState
  let postsPerMinute: Int
  /// New keys one address may bring in an hour (0: no limit).
  var newKeysPerHour = defaultNewKeysPerHour

  static let defaultPostsPerMinute = 10
  static let defaultNewKeysPerHour = 5

  /// The environment a member's run sees: nothing the client sent but its language (`LANG`,
  /// `LC_*`) and its terminal's type, each only when made of plain characters; the key's own
  /// directory as home, so profile, drafts and history are the key's alone; a pager that runs no
  /// commands.
  static func environment(from given: [String: String], keyHome: String) -> [String: String] {
    var environment: [String: String] = [
      "HOME": keyHome, "XDG_CONFIG_HOME": keyHome + "/config",
      "XDG_STATE_HOME": keyHome + "/state", "XDG_DATA_HOME": keyHome + "/data",
      "PATH": "/usr/bin:/bin", "LESSSECURE": "1",
    ]
    for (name, value) in given
    where name == "LANG" || name == "TERM" || (name.hasPrefix("LC_") && name.count <= 20) {
      let plain =
        !value.isEmpty && value.utf8.count <= 64
        && value.utf8.allSatisfy {
          (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || "._-+@".utf8.contains($0)
        }
      if plain { environment[name] = value }
    }
    return environment
  }

  /// The global options a member may give before the command; `--db` and `--profile` are the
  /// door's to choose.
  static let memberOptions: Set<String> = [
    "json", "no-color", "no-colour", "images", "no-pager", "help", "h", "version", "bail",
  ]
}

/// `ssh-session`: the forced command sshd runs for a key (`command="forum ssh-session --db BOARD
/// --key SHA256:…"`, written by `ssh-keys` from sshd's `%f`). The member's own command comes
/// from `$SSH_ORIGINAL_COMMAND`, parsed as a line at the prompt.
enum SSHSessionCommand: BoardlessCommand {
  static let name = "ssh-session"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "sshd's forced command: one key's member on the board (see ssh-setup)",
      "sshd の強制コマンド: 鍵ひとつがボードの一人 (ssh-setup を参照)"),
    details: Localized(
      "Run by sshd for a key, never by hand: the member's command is read from "
        + "SSH_ORIGINAL_COMMAND; only LANG, LC_* and TERM are taken from the environment.",
      "sshd が鍵ごとに実行します。メンバーのコマンドは SSH_ORIGINAL_COMMAND から読み、"
        + "環境変数は LANG、LC_*、TERM だけを使います。"),
    parameters: [db, key, state, postsPerMinute, newKeysPerHour])

  static let db = databaseOption
  static let key = Option<SSHFingerprint>(
    "key", help: Localized("the key's fingerprint, from sshd's %f", "鍵のフィンガープリント (sshd の %f)"),
    required: true)
  static let state = Option<FilePath>(
    "state", value: "DIR",
    help: Localized(
      "where the door keeps members' keys (default ~/.forum-ssh)",
      "鍵ごとのメンバー情報の置き場所 (既定 ~/.forum-ssh)"))
  static let postsPerMinute = Option<Budget>(
    "posts-per-minute", value: "N",
    help: Localized(
      "a key's posts a minute if the board sets none (default \(SSHDoor.defaultPostsPerMinute))",
      "掲示板が決めていないときの鍵ごとの毎分の投稿数 (既定 \(SSHDoor.defaultPostsPerMinute))"))

  static let newKeysPerHour = Option<NewKeyBudget>(
    "new-keys-per-hour", value: "N",
    help: Localized(
      "new keys an address may bring in an hour (default \(SSHDoor.defaultNewKeysPerHour))",
      "ひとつのアドレスから 1 時間に入れる新しい鍵の数 (既定 \(SSHDoor.defaultNewKeysPerHour)、0 で無制限)"))

  struct NewKeyBudget: ArgumentValue {
    let count: Int
    static var valueName: String { "N" }
    init(parsing word: String, messages: Messages) throws {
      guard let count = Int(word), count >= 0, count <= 100_000 else {
        throw CLIError.usage(messages.notANumber("new-keys-per-hour", SafeText.sanitize(word)))
      }
      self.count = count
    }
  }

  struct Budget: ArgumentValue {
    let count: Int
    static var valueName: String { "N" }
    init(parsing word: String, messages: Messages) throws {
      guard let count = Int(word), count >= 0, count <= 100_000 else {
        throw CLIError.usage(messages.notANumber("posts-per-minute", SafeText.sanitize(word)))
      }
      self.count = count
    }
  }

  static func run(_ invocation: Invocation, options: GlobalOptions, messages: Messages) throws
    -> Int32
  {
    guard let key = invocation[key], let location = invocation[db], !location.isEmpty else {
      throw CLIError.usage(messages.usage(info.usage))
    }
    var door = SSHDoor(
      key: key,
      state: SSHDoorState(directory: invocation[state]?.path ?? SSHDoorState.defaultDirectory()),
      postsPerMinute: invocation[postsPerMinute]?.count ?? SSHDoor.defaultPostsPerMinute)
    door.newKeysPerHour = invocation[newKeysPerHour]?.count ?? SSHDoor.defaultNewKeysPerHour
    // The environment is read leniently (U+FFFD for bytes that are not UTF-8); the client's
    // command is refused then, as the same bytes in an argument or a pipe are.
    let line = options.environment["SSH_ORIGINAL_COMMAND"]
    if line?.contains("\u{FFFD}") == true, let raw = getenv("SSH_ORIGINAL_COMMAND"),
      String(validatingCString: raw) == nil
    {
      return ForumMain.report(
        CLIError(DatastoreError(.invalid, field: "command", reason: DoorReason.commandNotUTF8)),
        json: false, line: nil,
        japanese: Terminal(environment: options.environment, noColorFlag: false).japanese)
    }
    return SSHDoorSession.run(door, location: location, given: options.environment, line: line)
  }
}

/// The member's run: refused keys and boards first, then one command or the prompt.
enum SSHDoorSession {
  static func run(_ door: SSHDoor, location: String, given: [String: String], line: String?)
    -> Int32
  {
    let keyHome = door.state.keyDirectory(door.key)
    let environment = SSHDoor.environment(from: given, keyHome: keyHome)
    var terminal = Terminal(environment: environment, noColorFlag: false)
    var messages = Messages(japanese: terminal.japanese)
    if let refusal = unwritable(location, messages: messages) {
      ForumMain.writeError("forum: " + refusal)
      return 1
    }
    let isNewKey = door.state.member(of: door.key) == nil
    // On SQLite the board's first user is its owner: a key never makes it, or the first
    // stranger through the door would own the board (`mod add`, bans, the budget). Only a key's
    // first visit can make a user, so only it is asked (one more open of the board), before
    // anything of the key is made or counted; no board file is made either.
    if isNewKey, EngineKind(location: location) == .sqlite {
      do {
        guard access(location, F_OK) == 0, try Datastore.open(location).hasUsers() else {
          ForumMain.writeError("forum: " + messages.doorBoardHasNoOwner)
          return 1
        }
      } catch {
        return ForumMain.reportOpening(error, json: false, japanese: terminal.japanese)
      }
    }
    do {
      // A key never seen before is held to its address's budget before anything of it is made.
      if isNewKey {
        try door.state.admitNewKey(
          from: SSHDoorState.address(fromConnection: given["SSH_CONNECTION"]),
          perHour: door.newKeysPerHour, now: Date().timeIntervalSince1970, messages: messages)
      }
      _ = try door.state.prepare(door.key)
      try door.state.takeSessionSlot(door.key, limit: SSHDoorState.sessionsPerKey)
    } catch {
      return ForumMain.report(CLIError(error), json: false, line: nil, japanese: terminal.japanese)
    }
    // The member's line: global options they may give, then the command as typed at the prompt.
    let words = CommandWords(line: line ?? "")
    var leading: [String] = []
    var commandRest: String?
    var index = 0
    while index < words.words.count {
      let word = words.words[index]
      guard let value = word.value else {
        ForumMain.writeError("forum: " + messages.unclosedQuote)
        return 2
      }
      guard value.hasPrefix("-"), value.count > 1 else {
        commandRest = String(word.rest)
        break
      }
      let name = String(value.drop { $0 == "-" }.prefix { $0 != "=" })
      guard SSHDoor.memberOptions.contains(name) else {
        let known = GlobalOptions.declared.contains { $0.spellings.contains(name) }
        ForumMain.writeError(
          "forum: "
            + (known
              ? messages.doorChoosesThis("--" + SafeText.sanitize(name))
              : messages.unknownGlobalOption(SafeText.sanitize(value), suggestion: nil)))
        return 2
      }
      leading.append(value)
      if name == "images", !value.contains("="), index + 1 < words.words.count,
        let next = words.words[index + 1].value
      {
        leading.append(next)
        index += 1
      }
      index += 1
    }
    var options: GlobalOptions
    do {
      options = try GlobalOptions(arguments: leading, environment: environment, messages: messages)
    } catch {
      return ForumMain.report(
        CLIError(error), json: leading.contains("--json"), line: nil, japanese: terminal.japanese)
    }
    options.databasePath = location
    options.profile = door.key.memberName
    options.profileNamed = false
    options.door = door
    terminal = Terminal(environment: environment, noColorFlag: options.noColor)
    messages = Messages(japanese: terminal.japanese)
    if options.showVersion {
      print("forum \(ForumMain.version)")
      return 0
    }
    if options.showHelp {
      print(
        CommandRegistry.overview(japanese: terminal.japanese, width: terminal.width, usage: false))
      return 0
    }
    Locale.prepare()
    let board: Board
    do {
      board = try Board(
        location: location, profile: door.key.memberName,
        profiles: ProfileStore(directory: ProfileStore.defaultDirectory(environment: environment)))
    } catch {
      return ForumMain.reportOpening(error, json: options.json, japanese: terminal.japanese)
    }
    door.state.recordMember(door.key, userId: board.myId)
    // A banned member is turned away at the door, in one line (the engine refuses their writes
    // on every other path too).
    do {
      try board.refresh()
    } catch {
      return ForumMain.reportOpening(error, json: options.json, japanese: terminal.japanese)
    }
    if board.isBanned {
      ForumMain.writeError("forum: " + messages.keyBanned)
      return 3
    }
    let state = door.state
    let key = door.key
    let doorBudget = door.postsPerMinute
    let budgetMessages = messages
    board.beforePost = { [unowned board] in
      // The board's own budget, read at each post so a change counts at once; the door's
      // `--posts-per-minute` where the board sets none.
      let budget = try board.postsPerMinute() ?? doorBudget
      try state.spend(
        key, perMinute: budget, now: Date().timeIntervalSince1970, messages: budgetMessages)
    }
    let input = ForumMain.makeInput(terminal, options: options)
    let oneShot = commandRest != nil
    let session = Session(
      board: board, terminal: terminal, input: input, options: options, oneShot: oneShot)
    guard let commandRest else {
      if input.isInteractive && !state.isNamed(key) {
        guard askName(session) else { return 1 }
        state.markNamed(key)
      }
      return CommandLoop(session: session, input: input, options: options).run()
    }
    do {
      let commandWords = CommandWords(line: commandRest)
      _ = try session.execute(commandWords)
      if commandWords.first == NameCommand.name { state.markNamed(key) }
      return Interrupt.requested ? 130 : 0
    } catch {
      let error = Interrupt.requested ? CLIError.interrupted : CLIError(error)
      return ForumMain.report(
        error, json: session.jsonErrors, line: nil, japanese: terminal.japanese)
    }
  }

  /// The first visit at a terminal: the member's display name, asked until one is taken.
  private static func askName(_ session: Session) -> Bool {
    print(session.messages.doorWelcome)
    while true {
      do {
        let name = try session.ask(session.messages.doorNamePrompt)
        let user = try session.board.rename(to: name)
        print(session.messages.renamed(SafeText.sanitize(user.displayName)))
        return true
      } catch CLIError.cancelled {
        return false
      } catch CLIError.interrupted {
        return false
      } catch {
        ForumMain.report(
          CLIError(error), json: false, line: nil, japanese: session.terminal.japanese)
      }
    }
  }

  /// A board file the door's user cannot write (or whose folder it cannot write, where SQLite
  /// keeps its journal): said in one line before anything is opened.
  static func unwritable(_ location: String, messages: Messages) -> String? {
    guard !location.contains("://") else { return nil }
    let directory = location.lastIndex(of: "/").map { String(location[...$0]) } ?? "./"
    let fileProblem = access(location, F_OK) == 0 && access(location, R_OK | W_OK) != 0
    guard fileProblem || access(directory, W_OK | X_OK) != 0 else { return nil }
    let user = getpwuid(geteuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
    return messages.doorCannotWrite(SafeText.sanitize(location), user: user ?? "\(geteuid())")
  }
}
