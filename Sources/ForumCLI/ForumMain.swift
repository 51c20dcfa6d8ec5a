import Datastore
import Forum
import Foundation

/// The `forum` program: parses global options, opens the board, then runs one command, a
/// script from a pipe, or the interactive prompt. Returns the exit status.
public enum ForumMain {
  public static let version = "0.1.0"

  public static func run(arguments: [String], environment: [String: String]) -> Int32 {
    setvbuf(stdout, nil, _IOLBF, 0)
    let options: GlobalOptions
    do {
      options = try GlobalOptions(arguments: arguments, environment: environment)
    } catch {
      return report(CLIError(error), json: false, line: nil, japanese: false)
    }
    let terminal = Terminal(environment: environment, noColorFlag: options.noColor)
    if options.showVersion {
      print("forum \(version)")
      return 0
    }
    if options.showHelp {
      print("usage: forum [--db PATH] [--profile NAME] [--json] [--no-color] [COMMAND …]\n")
      print(CommandSpec.overview())
      return 0
    }
    // A mistyped command or a request for help needs no database.
    if let word = options.command.first {
      let messages = Messages(japanese: terminal.japanese)
      do {
        let spec = try CommandSpec.lookup(word, messages: messages)
        if spec.name == "help" || options.command.contains("--help") {
          let topic = spec.name == "help" ? options.command.dropFirst().first : word
          print(try CommandSpec.help(topic: topic, messages: messages))
          return 0
        }
      } catch {
        return report(
          CLIError(error), json: options.json, line: nil, japanese: terminal.japanese)
      }
    }
    let board: Board
    do {
      board = try Board(
        location: options.resolvedDatabasePath(), profile: options.profile,
        profiles: ProfileStore(directory: ProfileStore.defaultDirectory(environment: environment)))
    } catch {
      return report(CLIError(error), json: options.json, line: nil, japanese: terminal.japanese)
    }
    if !options.command.isEmpty {
      let session = Session(
        board: board, terminal: terminal, input: makeInput(terminal, options: options),
        options: options,
        isREPL: false)
      do {
        _ = try session.execute(options.command)
        return 0
      } catch {
        return report(
          CLIError(error), json: session.jsonErrors, line: nil, japanese: terminal.japanese)
      }
    }
    return runLoop(board: board, terminal: terminal, options: options)
  }

  /// The REPL: at a terminal with readline, or over piped lines without prompts.
  static func runLoop(board: Board, terminal: Terminal, options: GlobalOptions) -> Int32 {
    let input = makeInput(terminal, options: options)
    let session = Session(
      board: board, terminal: terminal, input: input, options: options, isREPL: true)
    if let editor = input as? LineEditor {
      editor.completions = { session.completions(for: $0) }
      print(
        "forum \(version) — \(SafeText.sanitize(board.me.displayName)). Type 'help' for commands, Ctrl-D to leave."
      )
    }
    var status: Int32 = 0
    let editor = input as? LineEditor
    while true {
      // New comments in the current thread appear while the command prompt waits, not while a
      // draft or a confirmation is being typed.
      editor?.idle = { session.newCommentsInCurrentThread() }
      let event = input.readLine(prompt: session.prompt, history: true, completion: .commands)
      editor?.idle = nil
      let lineNumber = input.isInteractive ? nil : input.lineNumber
      do {
        switch event {
        case .endOfInput: return status
        case .interrupted: continue
        case .tooLong:
          throw DatastoreError(
            .invalid, field: "line",
            detail:
              "the line is longer than \(PipedInput.maximumLine / 1_048_576) MB; it was skipped")
        case .line(let bytes):
          let text = try decodeUTF8(bytes, field: "line")
          let words: [String]
          do {
            words = try Tokenizer.words(text)
          } catch {
            throw CLIError.usage(session.messages.unclosedQuote)
          }
          if let first = words.first, first.hasPrefix("#"), Int(first.dropFirst()) == nil {
            continue  // a comment line in a script: `# …` or `#…`, but not `#12`
          }
          if try session.execute(words) == .quit { return status }
        }
      } catch {
        let error = CLIError(error)
        if case .cancelled = error, input.isInteractive {
          print(session.messages.cancelled)
          continue
        }
        let code = report(
          error, json: session.jsonErrors, line: lineNumber, japanese: terminal.japanese)
        if !input.isInteractive { status = status == 0 ? code : status }
      }
    }
  }

  /// readline at a terminal; raw lines from a pipe or file.
  static func makeInput(_ terminal: Terminal, options: GlobalOptions) -> LineInput {
    terminal.isInteractive ? LineEditor(historyPath: options.historyPath) : PipedInput()
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
      FileHandle.standardError.write(Data((JSONValue.object(body).jsonText() + "\n").utf8))
      return error.exitStatus
    }
    var text = personMessage(error, messages: messages)
    if let line { text = messages.lineError(line, text) }
    FileHandle.standardError.write(Data(("forum: " + SafeText.sanitize(text) + "\n").utf8))
    return error.exitStatus
  }

  /// What a person reads for each failure.
  static func personMessage(_ error: CLIError, messages: Messages) -> String {
    switch error {
    case .usage(let text), .failed(let text): return text
    case .cancelled: return messages.cancelled
    case .deleteRefused: return messages.deleteRefused
    case .image(let rejection):
      return messages.imageRefused(rejection.reason)
    case .datastore(let error):
      switch error.code {
      case .noAccess: return messages.permissionRefused
      case .authentication: return messages.sessionRefused
      case .fileTooLarge: return messages.imageTooLarge(error.detail)
      case .empty: return messages.empty(error.field ?? "value")
      case .invalid, .notFound, .systemError:
        return messages.failure(code: error.code, field: error.field, detail: error.detail)
          ?? error.detail ?? error.message
      }
    }
  }
}
