import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// One run of the forum: the open board, where input comes from, how output looks, and, at the
/// prompt, the current thread. The same `execute` serves the prompt, scripts and one-shot
/// commands; only the prompt has a current thread, so a line means the same everywhere else.
final class Session {
  let board: Board
  let terminal: Terminal
  let input: LineInput
  let options: GlobalOptions
  /// True at the interactive prompt: the only place with a current thread.
  let atPrompt: Bool
  /// True for `forum COMMAND …`: its drafts come from stdin.
  let oneShot: Bool

  /// Where the prompt is (current thread, last listing, what the live view showed): commands
  /// tell it what they showed; only it keeps that state.
  let navigation: Navigation
  /// The thread `show` opened last at the prompt; `comment TEXT` and `/N` act on it.
  var currentThread: Int? { navigation.currentThread }
  /// The board's change feed at the prompt and in rooms (`LiveFeed`, `Session+Live`).
  private(set) lazy var live = LiveFeed(board: board)
  private(set) var json: Bool
  private(set) var useColor: Bool

  /// Lines of the running command's draft not read yet, for a script to skip after a refusal.
  var pendingDraft: [DraftPart] = []
  /// The script line that made a draft fail, when it is not the last line read.
  var failureLine: Int?
  /// Where the running command's draft goes; it is kept on disk until it is posted.
  var activeDraft: DraftTarget?
  /// The running command's draft when it could not be kept on disk, to print if not posted.
  var unsavedDraft: String?
  /// Whether drafts an older forum kept without their board and profile were looked for.
  var olderDraftsSetAside = false

  typealias SearchQuery = Navigation.SearchQuery

  init(
    board: Board, terminal: Terminal, input: LineInput, options: GlobalOptions, oneShot: Bool
  ) {
    self.board = board
    self.terminal = terminal
    self.input = input
    self.options = options
    self.oneShot = oneShot
    atPrompt = !oneShot && input.isInteractive
    navigation = Navigation(atPrompt: atPrompt)
    json = options.json
    useColor = terminal.useColor && !options.noColor
  }

  var messages: Messages { Messages(japanese: terminal.japanese) }
  var style: Style { Style(enabled: useColor) }
  var renderer: BoardRenderer {
    var renderer = BoardRenderer(
      style: style, messages: messages, width: terminal.width, now: BackendDate.now())
    renderer.columnHeaders = terminal.stdoutIsTerminal
    return renderer
  }

  var prompt: String {
    currentThread.map { "forum #\($0)> " } ?? "forum> "
  }

  // MARK: Running commands

  enum Outcome {
    case next
    case quit
  }

  /// A line of a group of script lines committed together (`CommandLoop.runGroup`).
  struct GroupedLine {
    /// The caller's roles were read in the group's transaction, which keeps every other
    /// writer out (`Board.groupsScriptLines`): its lines, comments, change none.
    var rolesRead: Bool
  }

  /// Runs one command: a line at the prompt or from a script, or the words of a one-shot.
  func execute(_ words: CommandWords, grouped: GroupedLine? = nil) throws -> Outcome {
    commandAskedForJSON = false
    pendingDraft = []
    failureLine = nil
    activeDraft = nil
    unsavedDraft = nil
    guard let first = words.words.first else { return .next }
    guard let name = first.value else { throw CLIError.usage(messages.unclosedQuote) }
    let command = try CommandRegistry.lookup(name, messages: messages)
    // A role granted or revoked meanwhile counts from this command on.
    // A group's first line reads them inside its transaction even as the run's first command
    // (the roles read at sign-in may be older than the group's lock).
    if let grouped {
      if !grouped.rolesRead { try board.refresh() }
    } else if commandsRun > 0 {
      try board.refresh()
    }
    commandsRun += 1
    // A grouped line has its text (`CommandLoop.isGroupable`): no draft to keep.
    if !input.isInteractive && !oneShot && grouped == nil {
      pendingDraft = command.draftParts(words)
    }
    let info = command.info
    var invocation = try Invocation(
      words, info: info, insideThread: currentThread != nil, messages: messages)
    if invocation[GlobalOptions.helpFlag] {
      print(info.help(japanese: terminal.japanese, width: terminal.width))
      return .next
    }
    guard info.argumentCount.contains(invocation.positionals.count) else {
      throw CLIError.usage(messages.usage(info.usage))
    }
    try invocation.resolve(info, messages: messages)
    let savedJSON = json
    let savedColor = useColor
    defer {
      json = savedJSON
      useColor = savedColor
    }
    if invocation[GlobalOptions.jsonFlag] {
      json = true
      commandAskedForJSON = true
    }
    if invocation[GlobalOptions.noColorFlag] { useColor = false }
    return try paged { try command.run(invocation, in: self) }
  }

  /// Commands started in this run (the first needs no fresh look at the caller's roles).
  private var commandsRun = 0

  /// Errors print as JSON when `--json` was given for the whole run or to the failing command.
  var jsonErrors: Bool { options.json || commandAskedForJSON }
  /// The command being run was given its own `--json`; cleared as each command starts.
  private var commandAskedForJSON = false

  // MARK: References

  /// A post as typed, `/3` being comment 3 of the current thread.
  func resolve(_ reference: PostRef) throws -> PostReference {
    switch reference {
    case .thread(let number): return .thread(number)
    case .comment(let thread, let number): return .comment(thread, number)
    case .currentThreadComment(let number):
      guard let currentThread else { throw CLIError.usage(messages.noCurrentThread) }
      return .comment(currentThread, number)
    }
  }

  /// The thread given, or the current one at the prompt.
  func thread(_ given: ThreadNumber?, example: String) throws -> Int {
    if let given { return given.number }
    guard let currentThread else { throw CLIError.usage(messages.whichThread(example)) }
    return currentThread
  }

  // MARK: Output

  /// Prints lines until Ctrl-C; the loop then says the command was interrupted. While a
  /// command's output may be paged, the lines are collected first.
  func printLines(_ lines: [String]) {
    if pageable != nil {
      pageable! += lines
      return
    }
    for line in lines {
      if Interrupt.requested { return }
      print(line)
    }
  }

  /// Lines of the running command held back for the pager; nil when output is not paged.
  private var pageable: [String]?

  /// Prints what was held back and stops holding: a command that turns interactive (a room)
  /// must show its output as it goes, and the commands run inside it page on their own.
  func endPaging() {
    guard let lines = pageable else { return }
    pageable = nil
    printLines(lines)
  }

  /// Runs `body` with its `printLines` output paged when it is taller than the terminal.
  func paged<T>(_ body: () throws -> T) rethrows -> T {
    guard terminal.stdoutIsTerminal, !options.noPager, !json, pageable == nil,
      let command = Pager.command(environment: options.environment)
    else { return try body() }
    pageable = []
    defer {
      let lines = pageable ?? []
      pageable = nil
      // Image protocols (kitty, iTerm2) draw on the terminal itself; a pager would show junk.
      let drawsImages = lines.contains { $0.contains("\u{1B}_G") || $0.contains("\u{1B}]1337") }
      if lines.count < terminal.height || drawsImages
        || !Pager.show(
          lines, command: command, environment: options.environment,
          japanese: terminal.japanese)
      {
        printLines(lines)
      }
    }
    return try body()
  }

  func emit(_ value: JSONValue) { print(value.jsonText()) }

  /// Prints one page of a listing as the REST API lists: `results`, then the paging fields
  /// (`page`, `hasMore`, and `count` when known) and any fields of the listing itself.
  func emitPage(
    _ results: [JSONValue], page: Int, hasMore: Bool, count: Int? = nil,
    with fields: [String: JSONValue] = [:]
  ) {
    var object = fields
    object["results"] = .array(results)
    object["page"] = .int(Int64(page))
    object["hasMore"] = .bool(hasMore)
    if let count { object["count"] = .int(Int64(count)) }
    emit(.object(object))
  }
}

/// A thread or one of its comments, as a command names it.
enum PostReference {
  case thread(Int)
  case comment(Int, Int)

  var label: String {
    switch self {
    case .thread(let number): return "#\(number)"
    case .comment(let thread, let number): return "\(thread)/\(number)"
    }
  }
}
