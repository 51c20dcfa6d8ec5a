import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// The prompt at a terminal, or a script read from a pipe: one line, one command.
struct CommandLoop {
  let session: Session
  let input: LineInput
  let options: GlobalOptions

  /// Runs to the end of input, `quit`, or (with `--bail`) a script's first failure; returns the
  /// exit status: a script's first failure's, 0 otherwise.
  func run() -> Int32 {
    let editor = input as? LineEditor
    // The next start counts what is new from when this prompt ends.
    defer { if editor != nil { UnreadSummary.recordLeaving(in: session) } }
    if let editor {
      editor.completions = { session.completions(for: $0) }
      print(
        session.messages.banner(ForumMain.version, SafeText.sanitize(session.board.me.displayName)))
      if let summary = UnreadSummary.startLine(in: session) { print(summary) }
      session.startLiveView()
    }
    var status: Int32 = 0
    // A script's checkpoints on a thread of their own, stopped before it returns.
    let checkpointed = session.board
    let checkpointer = ScriptCheckpoints.start(for: checkpointed, interactive: input.isInteractive)
    defer { ScriptCheckpoints.end(checkpointer, for: checkpointed) }
    // A command that ran through and whose output was then written: only after one is a log
    // known to be writable, and only then are lines committed together.
    var commandSucceeded = false
    while true {
      // What others wrote appears while the command prompt waits (and what came in while a
      // command ran, before the next prompt), not while a draft or a confirmation is typed.
      if editor != nil {
        for line in session.liveLines(force: true) { print(line) }
      }
      editor?.idle = {
        for _ in 0..<8 where session.board.tidy(idle: true) {}
        return session.liveLines(force: false)
      }
      editor?.wakeDescriptor = { session.live.descriptor }
      editor?.idleInterval = session.live.interval
      editor?.livePrompt = { session.prompt }
      // Each command's output is written when it ends, not when a block of it has gathered: a
      // script stopped part-way (Ctrl-C, kill) leaves a log of all it did, so re-running the
      // rest posts nothing twice. Output that cannot be written (a full disk) ends the run: the
      // commands after it would leave no record of what they did (`ForumMain.run` says why).
      fflush(stdout)
      if ferror(stdout) != 0 { return status == 0 ? 1 : status }
      // Lines are committed together only once a command's output was seen written: a log that
      // cannot be written stops the script at its first post, not after a group of them.
      let outputWritten = commandSucceeded
      // Between two commands, once the last one's output is out: a step of the index upkeep
      // its commit left (`Board.tidy`); at the prompt, more steps while it waits.
      session.board.tidy()
      let event = input.readLine(prompt: session.prompt, history: true, completion: .commands)
      editor?.idle = nil
      let commandLine = input.isInteractive ? nil : input.lineNumber
      do {
        switch event {
        case .endOfInput:
          // The rows its commits queued for the index, before it goes (a few steps: the queue
          // is bounded by `SQLiteSearch.pendingLimit`).
          for _ in 0..<8 where session.board.tidy(idle: true) {}
          return status
        case .interrupted: continue
        case .tooLong:
          throw DatastoreError(
            .invalid, field: "line",
            reason: InputReason.scriptLineTooLong(megabytes: PipedInput.maximumLine / 1_048_576))
        case .line(let bytes):
          let text = try decodeUTF8(bytes, field: "line")
          let words = CommandWords(line: text)
          if let first = words.first, first.hasPrefix("#"), Int(first.dropFirst()) == nil {
            continue  // a comment line in a script: `# …` or `#…`, but not `#12`
          }
          if outputWritten, let group = waitingGroup(after: words, line: commandLine ?? 0) {
            status = runGroup(group, status: status)
            continue
          }
          if session.atPrompt { session.leaveCurrentThreadIfGone() }
          Interrupt.clear()
          if try session.execute(words) == .quit { return status }
          if Interrupt.requested { throw CLIError.interrupted }
          commandSucceeded = true
        }
      } catch {
        var error = CLIError(error)
        if Interrupt.requested {
          Interrupt.clear()
          error = .interrupted  // a lock wait or a decode gave up because of Ctrl-C
        }
        if input.isInteractive, let draft = session.activeDraft {
          // Ctrl-D in a draft is no failure: only where the text is needs saying.
          if case .cancelled = error {
          } else {
            ForumMain.report(
              error, json: session.jsonErrors, line: nil, japanese: session.terminal.japanese)
          }
          session.sayWhereTheDraftIs(draft)
          continue
        }
        if input.isInteractive, case .cancelled = error {
          print(session.messages.cancelled)
          continue
        }
        if input.isInteractive, case .interrupted = error {
          editor?.discardPaste()
          print("\n" + session.messages.interrupted)  // below the terminal's own "^C"
          continue
        }
        // The line that made the command fail: a bad draft line, the title line, or the
        // command's own line when what it read was fine.
        var line = commandLine
        if commandLine != nil {
          line = session.failureLine ?? input.lineNumber
          if session.pendingDraft.isEmpty && session.failureLine == nil
            && input.lineNumber > (commandLine ?? 0) && !isAnswerError(error)
          {
            line = commandLine
          }
        }
        session.skipPendingDraft()
        let code = ForumMain.report(
          error, json: session.jsonErrors, line: line, japanese: session.terminal.japanese)
        if !input.isInteractive {
          status = status == 0 ? code : status
          if options.bail { return status }
        }
      }
    }
  }

  // MARK: Lines already waiting, committed together

  /// Most commands one group commits at once.
  static let groupLimit = 64

  /// A script's comment or reply whose text is on its line, followed by more such lines that
  /// have already arrived: those lines (up to `groupLimit`), taken from the input, with their
  /// line numbers. Nil otherwise (the prompt, `--bail`, an https board, a draft to read).
  private func waitingGroup(after words: CommandWords, line: Int) -> [(CommandWords, Int)]? {
    guard !input.isInteractive, !options.bail, session.board.groupsScriptLines,
      CommandLoop.isGroupable(words)
    else { return nil }
    var group = [(words, line)]
    while group.count < CommandLoop.groupLimit, let next = input.waitingLine(),
      let text = String(validating: next, as: UTF8.self)
    {
      let words = CommandWords(line: text)
      guard CommandLoop.isGroupable(words) else { break }
      _ = input.readLine(prompt: "", history: false, completion: .none)
      group.append((words, input.lineNumber))
    }
    // A line alone runs as every other command does.
    return group.count > 1 ? group : nil
  }

  /// `comment` and `reply` with their text on the line: each is one write and one line of
  /// output, and reads nothing more from the input.
  static func isGroupable(_ words: CommandWords) -> Bool {
    guard let name = words.first, let command = CommandRegistry.named(name),
      command == CommentCommand.self || command == ReplyCommand.self
    else { return false }
    return command.draftParts(words).isEmpty
  }

  /// Runs `group` in one transaction, each command undone alone when it fails (`Board.group`),
  /// and only then writes what each printed (its output, then its notes on stderr) and says what
  /// failed, in the lines' order, as if they had run one by one. When the commit fails, nothing
  /// any of them printed is written: each is told failed. Returns the run's status.
  private func runGroup(_ group: [(words: CommandWords, line: Int)], status: Int32) -> Int32 {
    var outputs = [[UInt8]](repeating: [], count: group.count)
    var notes = [[UInt8]](repeating: [], count: group.count)
    var jsonErrors = [Bool](repeating: options.json, count: group.count)
    var errors: [Error?]
    let captured = CapturedOutput()
    // The caller's roles are read once a transaction, by its first line that gets that far:
    // the group's lock keeps every other writer out until it commits (`groupsScriptLines`),
    // and its lines are comments. A failed line, or lines run again from an earlier one (the
    // transaction begun again), read them again.
    var rolesRead = false
    var lastIndex = -1
    do {
      errors = try session.board.group(group.count) { index in
        // Run again when the engine lost the transaction under it.
        (outputs[index], notes[index]) = ([], [])
        if index <= lastIndex { rolesRead = false }
        lastIndex = index
        defer { jsonErrors[index] = session.jsonErrors }
        try captured.capture(into: &outputs[index], notes: &notes[index]) {
          Interrupt.clear()
          do {
            _ = try session.execute(group[index].words, grouped: .init(rolesRead: rolesRead))
            if Interrupt.requested { throw CLIError.interrupted }
          } catch {
            rolesRead = false
            throw error
          }
          rolesRead = true
        }
      }
    } catch {
      errors = Array(repeating: error, count: group.count)
      outputs = Array(repeating: [], count: group.count)
      notes = Array(repeating: [], count: group.count)
    }
    var status = status
    for index in group.indices {
      CapturedOutput.write(outputs[index], notes: notes[index])
      // The loop stops at a log that cannot be written; the group is committed by now (the
      // README says so: at most a group's lines are missing from a log on a full disk).
      if ferror(stdout) != 0 { break }
      guard let error = errors[index] else { continue }
      let code = ForumMain.report(
        CLIError(error), json: jsonErrors[index], line: group[index].line,
        japanese: session.terminal.japanese)
      status = status == 0 ? code : status
    }
    Interrupt.clear()
    return status
  }

  /// Refusals of a single answer (the title) name the answer's line.
  private func isAnswerError(_ error: CLIError) -> Bool {
    if case .datastore(let error) = error, error.field == "title" || error.field == "input" {
      return true
    }
    return false
  }
}
