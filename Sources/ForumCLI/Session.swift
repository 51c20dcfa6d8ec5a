import Datastore
import Forum
import Foundation

/// One run of the forum: the open board, where input comes from, how output looks, and the
/// REPL's current thread. The same `execute` serves the prompt, scripts and one-shot commands.
final class Session {
  let board: Board
  let terminal: Terminal
  let input: LineInput
  let options: GlobalOptions
  /// The thread `show` opened last at the prompt; `comment` and `delete N` act on it.
  private(set) var currentThread: Int? {
    didSet { if currentThread != oldValue { newestSeenComment = nil } }
  }
  /// In the current thread, the newest comment number already on screen; newer ones are
  /// printed as they arrive (the chat-room seeds' live view).
  private var newestSeenComment: Int?
  private var lastFollowCheck = 0.0
  private var json: Bool
  private var useColor: Bool

  /// True at the prompt or over piped lines; false for a one-shot command.
  let isREPL: Bool

  init(
    board: Board, terminal: Terminal, input: LineInput, options: GlobalOptions, isREPL: Bool
  ) {
    self.isREPL = isREPL
    self.board = board
    self.terminal = terminal
    self.input = input
    self.options = options
    json = options.json
    useColor = terminal.useColor && !options.noColor
  }

  var messages: Messages { Messages(japanese: terminal.japanese) }
  private var style: Style { Style(enabled: useColor) }
  private var renderer: BoardRenderer {
    BoardRenderer(
      style: style, messages: messages, width: terminal.width, now: BackendDate.now())
  }

  var prompt: String {
    currentThread.map { "forum #\($0)> " } ?? "forum> "
  }

  // MARK: Running commands

  enum Outcome {
    case next
    case quit
  }

  /// Runs one command line (already split into words).
  func execute(_ words: [String]) throws -> Outcome {
    commandAskedForJSON = false
    guard let word = words.first else { return .next }
    let spec = try CommandSpec.lookup(word, messages: messages)
    var arguments = try Arguments(
      Array(words.dropFirst()), options: spec.options,
      flags: spec.flags.union(["json", "no-color", "help"]))
    if arguments.flags.contains("help") {
      print(spec.helpText)
      return .next
    }
    guard spec.arguments.contains(arguments.positionals.count) else {
      throw CLIError.usage(messages.usage(spec.usage))
    }
    let savedJSON = json
    let savedColor = useColor
    defer {
      json = savedJSON
      useColor = savedColor
    }
    if arguments.flags.remove("json") != nil {
      json = true
      commandAskedForJSON = true
    }
    if arguments.flags.remove("no-color") != nil { useColor = false }

    switch spec.name {
    case "list": try list(arguments)
    case "show": try show(arguments)
    case "new": try newThread(arguments)
    case "comment": try comment(arguments)
    case "delete": try delete(arguments)
    case "image": try image(arguments)
    case "whoami": whoami()
    case "name": try rename(arguments)
    case "help": try helpCommand(arguments)
    default: return .quit
    }
    return .next
  }

  private func list(_ arguments: Arguments) throws {
    let page = try pageNumber(arguments, last: nil)
    let threads = try board.threads(page: page)
    if json {
      emit(.object(["results": .array(threads.items.map(\.json))]))
    } else {
      printLines(renderer.threadList(threads))
    }
  }

  private func show(_ arguments: Arguments) throws {
    let number = try arguments.positionals.first.map(threadNumber) ?? requireCurrentThread()
    let thread = try board.thread(number)
    let page = try pageNumber(arguments, last: Board.lastPage(commentCount: thread.commentCount))
    let comments = try board.comments(of: thread, page: page)
    if isREPL {
      currentThread = number
      newestSeenComment = thread.lastCommentNumber
    }
    if json {
      emit(
        .object([
          "thread": thread.json, "results": .array(comments.items.map(\.json)),
          "count": .int(Int64(thread.commentCount)),
        ]))
      return
    }
    let image = page == 1 ? imageBlock(for: thread, large: false) : []
    printLines(renderer.threadHeader(thread, image: image))
    printLines(renderer.comments(comments, of: thread))
  }

  private func newThread(_ arguments: Arguments) throws {
    let title = try arguments.options["title"] ?? ask(messages.titlePrompt)
    _ = try PostRules.title(title)  // refuse a bad title before asking for more
    let description: String
    if let given = arguments.options["description"] {
      description = given
    } else if arguments.options["title"] != nil && !input.isInteractive {
      description = ""
    } else {
      description = try draft(messages.descriptionPrompt)
    }
    var imagePath = arguments.options["image"]
    if imagePath == nil && arguments.options["title"] == nil {
      let answer = try ask(messages.imagePrompt, completion: .paths)
      imagePath = answer.trimmingCharacters(in: .whitespaces).isEmpty ? nil : answer
    }
    let image = try imagePath.map {
      try ImageAttachment.load(path: $0, limit: board.fileSizeLimit)
    }
    let thread = try board.createThread(title: title, description: description, image: image)
    if json {
      emit(thread.json)
    } else {
      print(messages.posted("#\(thread.number)"))
    }
  }

  private func comment(_ arguments: Arguments) throws {
    var words = arguments.positionals
    let number: Int
    if let first = words.first, let parsed = try? threadNumber(first) {
      number = parsed
      words.removeFirst()
    } else {
      number = try requireCurrentThread()
    }
    let text = words.isEmpty ? try draft(messages.commentPrompt) : words.joined(separator: " ")
    let comment = try board.addComment(to: number, text: text)
    if number == currentThread, let seen = newestSeenComment, seen == comment.number - 1 {
      newestSeenComment = comment.number  // nothing else arrived in between: no need to echo it
    }
    if json {
      emit(comment.json)
    } else {
      print(messages.posted("\(number)/\(comment.number)"))
    }
  }

  private func delete(_ arguments: Arguments) throws {
    let target = try postReference(arguments.positionals[0])
    let confirmed = arguments.flags.contains("yes") || arguments.flags.contains("y")
    if !confirmed && !input.isInteractive { throw CLIError.usage(messages.deleteNeedsYes) }
    do {
      switch target {
      case .thread(let number):
        let thread = try board.thread(number)
        if !confirmed {
          var what = "#\(number) \"\(SafeText.truncate(SafeText.sanitize(thread.title), to: 40))\""
          what += " · \(messages.commentCount(thread.commentCount))"
          if thread.image != nil { what += " · image" }
          try confirm(what)
        }
        try board.deleteThread(number)
        if currentThread == number { currentThread = nil }
      case .comment(let threadNumber, let number):
        let comment = try board.comment(number, inThread: threadNumber)
        if !confirmed {
          let text = SafeText.truncate(SafeText.sanitize(comment.text), to: 40)
          try confirm("\(threadNumber)/\(number) \"\(text)\"")
        }
        try board.deleteComment(number, inThread: threadNumber)
      }
    } catch let error as DatastoreError where error.code == .noAccess {
      throw CLIError.deleteRefused(error)
    }
    if json {
      emit(.object([:]))
    } else {
      print(messages.deleted(target.label))
    }
  }

  private func confirm(_ what: String) throws {
    print(messages.willDelete(what))
    let answer = try ask(messages.confirmDelete).lowercased()
    guard ["y", "yes", "はい"].contains(answer.trimmingCharacters(in: .whitespaces)) else {
      throw CLIError.cancelled
    }
  }

  private func image(_ arguments: Arguments) throws {
    let number = try arguments.positionals.first.map(threadNumber) ?? requireCurrentThread()
    let thread = try board.thread(number)
    guard thread.image != nil else {
      throw DatastoreError(.notFound, detail: "thread #\(number) has no image")
    }
    if let path = arguments.options["save"] {
      let bytes = try board.imageBytes(of: thread)
      try ImageAttachment.save(bytes, to: path, overwrite: arguments.flags.contains("force"))
      if json {
        emit(.object(["saved": .string(path), "fileSize": .int(Int64(bytes.count))]))
      } else {
        print("Saved \(ImageFile.formatSize(bytes.count)) to \(SafeText.sanitize(path)).")
      }
      return
    }
    printLines(imageBlock(for: thread, large: true))
  }

  private func whoami() {
    let me = board.me
    if json {
      emit(me.json)
      return
    }
    print("\(style.mine(SafeText.sanitize(me.displayName))) (\(me.userName))")
    print("user id:  \(me.objectId)")
    print("profile:  \(board.profileName) (\(SafeText.sanitize(board.profilePath)))")
    print("database: \(SafeText.sanitize(board.location))")
  }

  private func rename(_ arguments: Arguments) throws {
    let user = try board.rename(to: arguments.positionals.joined(separator: " "))
    if json {
      emit(user.json)
    } else {
      print(messages.renamed(SafeText.sanitize(user.displayName)))
    }
  }

  private func helpCommand(_ arguments: Arguments) throws {
    print(try CommandSpec.help(topic: arguments.positionals.first, messages: messages))
  }

  // MARK: Images

  /// The image part of a thread view: a preview on a colour terminal, the text line otherwise,
  /// and the placeholder bubble when the thread has none.
  private func imageBlock(for thread: ForumThread, large: Bool) -> [String] {
    guard let image = thread.image else { return ImagePreview.placeholder.map(style.dim) }
    let line = renderer.imageLine(image)
    // Decide first: a pipe or a colourless terminal gets the line without reading the bytes.
    guard
      let mode = options.images.renderMode(
        environment: options.environment, isTerminal: terminal.stdoutIsTerminal,
        colorEnabled: useColor)
    else { return [line] }
    let box =
      large
      ? PreviewBox.full(terminalColumns: terminal.width, terminalRows: terminal.height)
      : PreviewBox.thumbnail(terminalColumns: terminal.width)
    do {
      let stored = image.storedImage(try board.imageBytes(of: thread))
      let drawn = try ImagePreview.lines(
        stored, mode: mode, box: box,
        background: .terminalBackground(environment: options.environment))
      return drawn + [line]
    } catch {
      return [line]  // a picture we cannot draw (WebP) keeps its text line
    }
  }

  // MARK: Input helpers

  /// One line of input for a question; Ctrl-C or end of input cancels the command.
  private func ask(_ question: String, completion: CompletionKind = .none) throws -> String {
    switch input.readLine(
      prompt: input.isInteractive ? question : "", history: false, completion: completion)
    {
    case .line(let bytes): return try decodeUTF8(bytes, field: "input")
    case .tooLong: throw DatastoreError(.invalid, field: "input", detail: "line is too long")
    case .interrupted, .endOfInput: throw CLIError.cancelled
    }
  }

  /// Several lines, ending with a line holding a single `.` (or the end of piped input).
  /// A bad line (invalid UTF-8, far too long) fails the draft only at its end: the lines after
  /// it are still draft text, and must never run as commands in a script.
  private func draft(_ heading: String) throws -> String {
    if input.isInteractive { print(style.dim(heading)) }
    var lines: [String] = []
    var total = 0
    var failure: Error?
    let tooLong = DatastoreError(
      .invalid, field: "text", detail: "text is longer than \(PostRules.bodyLimit) characters")
    while true {
      switch input.readLine(
        prompt: input.isInteractive ? "> " : "", history: false, completion: .none)
      {
      case .line(let bytes):
        if bytes == [UInt8(ascii: ".")] {
          if let failure { throw failure }
          return lines.joined(separator: "\n")
        }
        guard failure == nil else { continue }
        do {
          let line = try decodeUTF8(bytes, field: "text")
          total += line.count + 1
          // Stop collecting early; PostRules gives the precise message.
          if total > PostRules.bodyLimit * 4 { throw tooLong }
          lines.append(line)
        } catch {
          failure = error
          lines = []
        }
      case .tooLong:
        if failure == nil { failure = tooLong }
        lines = []
      case .endOfInput where !input.isInteractive:
        if let failure { throw failure }
        return lines.joined(separator: "\n")
      case .interrupted, .endOfInput: throw CLIError.cancelled
      }
    }
  }

  // MARK: Argument helpers

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

  /// `12`, `#12`, `12/3`; with a current thread, a bare `3` is its comment 3.
  private func postReference(_ text: String) throws -> PostReference {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    if parts.count == 2 {
      return .comment(try threadNumber(String(parts[0])), try positive(String(parts[1]), "comment"))
    }
    if !text.hasPrefix("#"), let current = currentThread {
      return .comment(current, try positive(text, "comment"))
    }
    return .thread(try threadNumber(text))
  }

  private func threadNumber(_ text: String) throws -> Int {
    try positive(text.hasPrefix("#") ? String(text.dropFirst()) : text, "thread")
  }

  private func positive(_ text: String, _ what: String) throws -> Int {
    guard let number = Int(text), number > 0 else {
      throw CLIError.usage(messages.notANumber(what, SafeText.sanitize(text)))
    }
    return number
  }

  private func requireCurrentThread() throws -> Int {
    guard let currentThread else { throw CLIError.usage(messages.whichThread) }
    return currentThread
  }

  private func pageNumber(_ arguments: Arguments, last: Int?) throws -> Int {
    guard let text = arguments.options["page"] else { return 1 }
    if text == "last", let last { return last }
    return try positive(text, "page")
  }

  // MARK: Following the current thread

  /// Comments posted to the current thread since it was shown, rendered, at most once a second;
  /// the prompt's idle hook prints them above the line being typed.
  func newCommentsInCurrentThread() -> [String] {
    guard let number = currentThread, let seen = newestSeenComment else { return [] }
    let now = Date().timeIntervalSince1970
    guard now - lastFollowCheck >= 1 else { return [] }
    lastFollowCheck = now
    guard let thread = try? board.thread(number), thread.lastCommentNumber > seen,
      let page = try? board.comments(
        of: thread, page: Board.lastPage(commentCount: thread.commentCount))
    else { return [] }
    newestSeenComment = thread.lastCommentNumber
    let fresh = page.items.filter { $0.number > seen }
    var lines = renderer.commentLines(fresh)
    let missed = thread.lastCommentNumber - seen - page.items.count
    if fresh.count == page.items.count, missed > 0 {
      lines.insert(style.dim(messages.moreNewComments(missed, thread: number)), at: 0)
    }
    return lines
  }

  // MARK: Completion and output

  /// Errors print as JSON when `--json` was given for the whole run or to the failing command.
  var jsonErrors: Bool { options.json || commandAskedForJSON }
  /// The command being run was given its own `--json`; cleared as each command starts.
  private var commandAskedForJSON = false

  /// Tab candidates: command words first, then thread numbers of the first page.
  func completions(for lineBefore: String) -> [String] {
    let words = lineBefore.split(separator: " ")
    if words.isEmpty { return CommandSpec.all.map(\.name) }
    guard ["show", "comment", "delete", "image"].contains(String(words[0])) else { return [] }
    let numbers = (try? board.threads(page: 1).items.map { String($0.number) }) ?? []
    return numbers
  }

  private func printLines(_ lines: [String]) {
    for line in lines { print(line) }
  }

  private func emit(_ value: JSONValue) { print(value.jsonText()) }
}
