import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// The `forum` program: parses global options, opens the board, then runs one command, a
/// script from a pipe, or the interactive prompt. Returns the exit status.
public enum ForumMain {
  public static let version = "0.1.0"

  public static func run(arguments: [String], environment: [String: String]) -> Int32 {
    // The ssh door's user has forum as its shell: sshd runs `forum -c "FORCED COMMAND"`.
    if arguments.first == "-c" { return SSHDoorShell.run(arguments, environment: environment) }
    // A terminal sees each line as it is printed. Into a pipe or a file the output goes in blocks
    // (a page of `show` was a hundred writes); it is flushed at the end of each command, before
    // any input is waited for and before anything goes to stderr, so a program driving the
    // prompt and `2>&1` see it in order, and a script stopped part-way leaves all it did.
    setvbuf(stdout, nil, isatty(STDOUT_FILENO) != 0 ? _IOLBF : _IOFBF, 0)
    // A full disk or a file size limit is an error to report, not a signal that kills the
    // process after a commit (a retry would then post twice).
    signal(SIGXFSZ, SIG_IGN)
    let status = runCommands(arguments: arguments, environment: environment)
    RemoteTransport.settle()
    // Output that could not be written (`forum list > /dev/full`) is a failure.
    if fflush(stdout) != 0 || ferror(stdout) != 0 {
      let reason = String(cString: strerror(errno))
      writeError("forum: cannot write output: \(reason)")
      return status == 0 ? 1 : status
    }
    return status
  }

  private static func runCommands(arguments: [String], environment: [String: String]) -> Int32 {
    let options: GlobalOptions
    let japanese = Terminal(environment: environment, noColorFlag: true).japanese
    do {
      options = try GlobalOptions(
        arguments: arguments, environment: environment, messages: Messages(japanese: japanese))
    } catch {
      return report(
        CLIError(error), json: arguments.contains("--json"), line: nil, japanese: japanese)
    }
    let terminal = Terminal(environment: environment, noColorFlag: options.noColor)
    let messages = Messages(japanese: terminal.japanese)
    // Said for this thread's waits only: `forum serve`'s workers wait without a word.
    let sayWhy: @Sendable (Interrupt.Wait) -> Void = { wait in
      switch wait {
      case .anotherWriter: writeError(messages.waitingForWriter)
      case .upgrade: writeError(messages.upgradingBoard)
      }
    }
    return Interrupt.withLongWait(sayWhy) {
      runCommands(options, terminal: terminal, messages: messages, environment: environment)
    }
  }

  private static func runCommands(
    _ options: GlobalOptions, terminal: Terminal, messages: Messages, environment: [String: String]
  ) -> Int32 {
    if options.showVersion {
      print("forum \(version)")
      return 0
    }
    if options.showHelp && options.json {
      print(try! CommandRegistry.helpJSON(topic: nil, japanese: terminal.japanese).jsonText())
      return 0
    }
    if options.showHelp {
      print(
        CommandRegistry.overview(japanese: terminal.japanese, width: terminal.width, usage: true))
      return 0
    }
    // An https board's libraries open beside the rest of the start (the first request waits).
    if EngineKind(location: options.resolvedDatabasePath()) == .remote { RemoteTransport.prepare() }
    // Only now: the C library's locale reads a dozen files that the version and the help need not.
    Locale.prepare()
    // A mistyped command or a request for help needs no database; nor do the commands that
    // run before any sign-in.
    if let word = options.command.first {
      do {
        let command = try CommandRegistry.lookup(word, messages: messages)
        let words = CommandWords(arguments: options.command)
        let asked = try? Invocation(
          words, info: command.info, insideThread: false, messages: messages, lenient: true)
        if command == HelpCommand.self || asked?[GlobalOptions.helpFlag] == true {
          let topic =
            command == HelpCommand.self
            ? options.command.dropFirst().first { !$0.hasPrefix("-") } : command.info.name
          if options.json || options.command.contains("--json") {
            print(
              try CommandRegistry.helpJSON(topic: topic, japanese: terminal.japanese).jsonText())
            return 0
          }
          print(
            try CommandRegistry.help(
              topic: topic, japanese: terminal.japanese, width: terminal.width))
          return 0
        }
        if let boardless = command.boardless {
          let json = options.json || options.command.contains("--json")
          do {
            var invocation = try Invocation(
              words, info: command.info, insideThread: false, messages: messages)
            if let extra = invocation.positionals.first,
              !command.info.argumentCount.contains(invocation.positionals.count)
            {
              throw CLIError.usage(
                messages.takesNoArgument(command.info.name, SafeText.sanitize(extra)))
            }
            try invocation.resolve(command.info, messages: messages)
            return try boardless.run(invocation, options: options, messages: messages)
          } catch {
            return reportOpening(error, json: json, japanese: terminal.japanese)
          }
        }
      } catch {
        return report(
          CLIError(error), json: options.json, line: nil, japanese: terminal.japanese)
      }
    }
    let board: Board
    let location = options.resolvedDatabasePath()
    // A board file named by hand that is not there yet may be a typo: the open makes it.
    let newBoard =
      options.databasePath != nil && !location.contains("://")
      && !FileManager.default.fileExists(atPath: location)
    do {
      board = try Board(
        location: location, profile: options.profile,
        profiles: ProfileStore(directory: ProfileStore.defaultDirectory(environment: environment)))
    } catch {
      return reportOpening(error, json: options.json, japanese: terminal.japanese)
    }
    // Said once, when it happens, to the person at the terminal (a script named what it meant).
    if isatty(STDERR_FILENO) != 0 {
      if newBoard {
        writeError("forum: " + messages.newBoard(SafeText.sanitize(location)))
      } else if board.isNewIdentity && options.profileNamed {
        writeError("forum: " + messages.newProfile(SafeText.sanitize(options.profile)))
      }
    }
    let input = makeInput(terminal, options: options)
    let oneShot = !options.command.isEmpty
    let session = Session(
      board: board, terminal: terminal, input: input, options: options, oneShot: oneShot)
    guard oneShot else {
      return CommandLoop(session: session, input: input, options: options).run()
    }
    do {
      _ = try session.execute(CommandWords(arguments: options.command))
      fflush(stdout)
      session.board.tidy(idle: true)  // a step of the index upkeep its write left, after its output
      return Interrupt.requested ? 130 : 0
    } catch {
      let error = Interrupt.requested ? CLIError.interrupted : CLIError(error)
      if case .cancelled = error, input.isInteractive, let draft = session.activeDraft,
        session.unsavedDraft != nil || session.drafts.load(draft) != nil
      {
        // Ctrl-D in a draft: where the text is, not "nothing was saved" when it was.
        session.sayWhereTheDraftIs(draft)
        return error.exitStatus
      }
      return report(error, json: session.jsonErrors, line: nil, japanese: terminal.japanese)
    }
  }

  /// readline at a terminal; raw lines from a pipe or file.
  static func makeInput(_ terminal: Terminal, options: GlobalOptions) -> LineInput {
    terminal.isInteractive ? LineEditor(historyPath: options.historyPath) : PipedInput()
  }

  /// A board that cannot be opened: said as every failure is (a refused login or a missing
  /// membership names the fix), with the permission status 3.
  static func reportOpening(_ error: Error, json: Bool, japanese: Bool) -> Int32 {
    report(CLIError(error), json: json, line: nil, japanese: japanese)
  }

  /// Prints an error as one line on stderr (JSON with `--json`) and returns its exit status.
  @discardableResult
  static func report(_ error: CLIError, json: Bool, line: Int?, japanese: Bool) -> Int32 {
    let messages = Messages(japanese: japanese)
    if json {
      var body: [String: JSONValue] = [
        "code": .string(error.codeAndMessage.code), "error": .string(error.codeAndMessage.message),
      ]
      if let line { body["line"] = .int(Int64(line)) }
      // "System error." alone is nothing a program can act on: the reason goes beside it (a board
      // written by a newer forum, a file that is not a board…), as a person reads it.
      // The person's sentence says what to do next ("Try: list --page last", who may delete):
      // a program needs it as much, so it goes beside the code whenever it says more.
      let said = personMessage(error, messages: messages)
      if said != error.codeAndMessage.message {
        body["detail"] = .string(SafeText.sanitize(said))
      }
      writeError(JSONValue.object(body).jsonText())
      return error.exitStatus
    }
    var text = personMessage(error, messages: messages)
    if let line { text = messages.lineError(line, text) }
    writeError("forum: " + SafeText.sanitize(text))
    return error.exitStatus
  }

  /// One line on stderr, after whatever stdout holds, so the two stay in order.
  static func writeError(_ line: String) {
    fflush(stdout)
    fputs(line + "\n", stderr)
  }

  /// What a person reads for each failure.
  static func personMessage(_ error: CLIError, messages: Messages) -> String {
    switch error {
    case .usage(let text), .failed(let text): return text
    case .local(let reason): return reason.wording.text(japanese: messages.japanese)
    case .cancelled: return messages.cancelled
    case .interrupted: return messages.interrupted
    case .notFound(let text): return text
    case .image(let rejection):
      return messages.imageRefused(rejection)
    case .imageLibrary(let missing): return messages.imageLibraryUnavailable(missing)
    case .datastore(let error): return messages.failure(error)
    }
  }
}
