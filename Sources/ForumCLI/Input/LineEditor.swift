@preconcurrency import CReadline  // readline's globals: the prompt's thread only
import Datastore

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

// readline's callbacks are C function pointers that cannot capture context, so the state they
// share with the editor lives here. One editor exists per process, on the prompt's thread
// (the flags are also set by its signal handlers): unchecked, as readline's own globals are.
nonisolated(unsafe) private var pendingLine: InputEvent?
nonisolated(unsafe) private var interruptRequested: sig_atomic_t = 0
nonisolated(unsafe) private var resizeRequested: sig_atomic_t = 0
nonisolated(unsafe) private var continued: sig_atomic_t = 0
nonisolated(unsafe) private var completionKind = CompletionKind.commands
nonisolated(unsafe) private var completionCandidates: [String] = []
nonisolated(unsafe) private var completionProvider: ((String) -> CompletionAnswer)?

/// GNU readline driven through its callback interface and `poll`, so the loop can wake up for
/// other work (a followed thread's new comments) while a person types, without a rewrite.
final class LineEditor: LineInput {
  let isInteractive = true
  private(set) var lineNumber = 0
  /// Text the next line starts with, for the person to change (`edit`'s old text).
  var prefill = ""
  private let historyPath: String?
  static let historyLimit = 1000

  /// Candidates for the word being completed, given the line up to the cursor.
  var completions: ((String) -> CompletionAnswer)? {
    get { completionProvider }
    set { completionProvider = newValue }
  }

  init(historyPath: String?) {
    self.historyPath = historyPath
    rl_readline_name = UnsafePointer(strdup("forum"))
    // We handle SIGINT and SIGWINCH ourselves: readline's handlers only run inside its calls.
    rl_catch_signals = 0
    rl_catch_sigwinch = 0
    rl_attempted_completion_function = forumCompletion
    // readline's default word breaks hold `@` (and `$`): `dm @bo<Tab>` would complete `bo` and
    // `dm @<Tab>` give `@@…`. A handle is one word with its `@`.
    rl_completer_word_break_characters = UnsafePointer(strdup(" \t\n\"\\'`><=;|&{("))
    // A paste arrives as one piece (newlines kept), not as keys that would run each line
    // half-typed; `readLine` then hands it out line by line.
    rl_variable_bind("enable-bracketed-paste", "on")
    using_history()
    stifle_history(Int32(LineEditor.historyLimit))
    if let historyPath {
      LineEditor.prepareDirectory(for: historyPath)
      read_history(historyPath)
    }
    LineEditor.installSignalHandlers()
  }

  /// Lines of a pasted block still to be handed out, each echoed after its prompt.
  private var pastedLines: [[UInt8]] = []
  /// True when the line `readLine` returned last came from a paste (its newline pasted too,
  /// not typed): a room then never runs it as a command (`ChatRoom+Paste`).
  private(set) var lastLineWasPasted = false

  /// Takes the rest of the pasted block, which `readLine` would otherwise hand out one line at
  /// a time, unechoed.
  func takePastedLines() -> [[UInt8]] {
    defer { pastedLines = [] }
    return pastedLines
  }

  /// Set in a room, where a paste is one thing to send: a paste's last line is part of it
  /// even without a final newline (the usual copy), instead of waiting on the next line being
  /// edited; and several lines arriving at once without paste brackets (a terminal that does
  /// not bracket) are a paste too, as a bracketed one is.
  var takesWholePastes = false

  func readLine(prompt: String, history: Bool, completion: CompletionKind) -> InputEvent {
    fflush(stdout)  // when stdout is not the terminal, it is block-buffered
    lastLineWasPasted = !pastedLines.isEmpty
    if !pastedLines.isEmpty {
      let line = pastedLines.removeFirst()
      fputs(prompt + String(decoding: line, as: UTF8.self) + "\n", stdout)
      fflush(stdout)
      return accept(.line(line), history: history)
    }
    completionKind = completion
    pendingLine = nil
    // A Ctrl-C pressed between two reads (after Enter, before the next prompt) is for this one;
    // one that stopped a command's work was already answered.
    if !Interrupt.requested { interruptRequested = 0 }
    rl_callback_handler_install(prompt, lineHandler)
    defer { rl_callback_handler_remove() }
    if !prefill.isEmpty {
      rl_insert_text(prefill)
      prefill = ""
      rl_redisplay()
    }
    if !pastedRest.isEmpty {
      rl_insert_text(pastedRest)
      pastedRest = ""
      rl_redisplay()
    }
    var lastIdle = LineEditor.monotonicSeconds()
    while pendingLine == nil {
      // stdin, and the board's wake-up descriptor when it has one: a commit elsewhere ends the
      // wait at once; without one, `idle` runs every `idleInterval` seconds.
      var descriptors = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)]
      if let wake = wakeDescriptor?() {
        descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
      }
      let wait = max(10, Int32((idleInterval * 1000).rounded()))
      let ready = poll(&descriptors, nfds_t(descriptors.count), wait)
      // Taken now: what runs below (the terminal prepared again after `fg`) may change it.
      let pollError = ready < 0 ? errno : 0
      let descriptor = descriptors[0]
      if interruptRequested != 0 {
        interruptRequested = 0
        discardPaste()
        Interrupt.clear()  // this Ctrl-C was for the line being typed, not for work
        rl_free_line_state()
        rl_callback_sigcleanup()
        fputs("^C\n", stdout)
        fflush(stdout)
        return .interrupted
      }
      if resizeRequested != 0 {
        resizeRequested = 0
        LineEditor.redrawAfterResize()
      }
      if continued != 0 {
        continued = 0
        // Back from Ctrl-Z and `fg`: the shell set the terminal to its own (cooked) modes when
        // it stopped us, so prepare it for readline again (the prepare does nothing while
        // readline believes it prepared already); then, the shell's lines being under the old
        // prompt, draw the prompt and the half-typed line anew.
        rl_deprep_terminal()
        rl_prep_terminal(1)
        rl_on_new_line()
        rl_forced_update_display()
      }
      if ready > 0 {
        if descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
          rl_callback_read_char()
          if pendingLine == nil { acceptPastedLines() }
        }
      } else if ready < 0 && pollError != EINTR {
        return .endOfInput
      }
      // Someone wrote, or it is time to look: also while keys keep arriving.
      let woken = descriptors.count > 1 && descriptors[1].revents != 0
      let now = LineEditor.monotonicSeconds()
      if pendingLine == nil, woken || now - lastIdle >= idleInterval {
        lastIdle = now
        printAbovePrompt(idle?() ?? [])
      }
    }
    var event = pendingLine!
    if takesWholePastes, case .line(let bytes) = event, let burst = LineEditor.burst() {
      event = .line(bytes + [UInt8(ascii: "\n")] + burst)
    }
    // A pasted block: its first line now, the others at the next reads.
    if case .line(let bytes) = event, bytes.contains(UInt8(ascii: "\n")) {
      var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        .map { Array($0).last == UInt8(ascii: "\r") ? Array($0.dropLast()) : Array($0) }
      if lines.last?.isEmpty == true { lines.removeLast() }
      if takesWholePastes, !pastedRest.isEmpty {
        // A bracketed paste without a final newline: its last line is part of it.
        lines.append(Array(pastedRest.utf8))
        pastedRest = ""
      }
      event = .line(lines.first ?? [])
      pastedLines = Array(lines.dropFirst())
      lastLineWasPasted = true
    }
    return accept(event, history: history)
  }

  /// The part of a paste after its last newline, typed on at the next read.
  private var pastedRest = ""

  /// A bracketed paste lands in the line as text, newlines and all, and readline waits for
  /// Enter. The lines the paste completed are taken as entered, as if each had been typed; what
  /// follows the last newline stays on the line being edited.
  private func acceptPastedLines() {
    guard let buffer = rl_line_buffer else { return }
    let bytes = Array(
      UnsafeBufferPointer(
        start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: strlen(buffer)))
    guard let lastNewline = bytes.lastIndex(of: UInt8(ascii: "\n")) else { return }
    pastedRest = String(decoding: bytes[(lastNewline + 1)...], as: UTF8.self)
    rl_replace_line("", 0)
    rl_callback_handler_remove()
    fputs("\n", stdout)
    pendingLine = .line(Array(bytes[...lastNewline]))
  }

  /// After a line ended by Enter: the keys already waiting behind it, when there are any (a
  /// person's next key cannot be there yet; a paste's next line is), read on until input
  /// pauses, with carriage returns as newlines. Nil when nothing was waiting.
  private static func burst() -> [UInt8]? {
    var bytes: [UInt8] = []
    var wait: Int32 = 0
    while true {
      var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, wait) > 0, descriptor.revents & Int16(POLLIN) != 0 else { break }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = read(STDIN_FILENO, &chunk, chunk.count)
      guard count > 0 else { break }
      bytes += chunk[..<count]
      wait = 20  // the rest of a paste follows within milliseconds
      if bytes.count > 1 << 20 { break }
    }
    var lines = bytes.map { $0 == UInt8(ascii: "\r") ? UInt8(ascii: "\n") : $0 }
    // Nothing but the end of the same line (a terminal's CR LF): no paste.
    guard lines.contains(where: { $0 != UInt8(ascii: "\n") }) else { return nil }
    if lines.last == UInt8(ascii: "\n") { lines.removeLast() }
    return lines
  }

  /// Drops the rest of a pasted block (after Ctrl-C).
  func discardPaste() {
    pastedLines = []
    pastedRest = ""
  }

  private func accept(_ event: InputEvent, history: Bool) -> InputEvent {
    if case .line(let bytes) = event {
      lineNumber += 1
      if history, !bytes.allSatisfy({ $0 == UInt8(ascii: " ") }) {
        remember(bytes)
      }
    }
    return event
  }

  /// Called when the wake-up descriptor is readable and every `idleInterval` seconds; lines it
  /// returns are printed above the prompt, and what was typed so far stays as it was.
  var idle: (() -> [String])?
  /// A descriptor to wait on beside stdin (the board's change feed), or nil.
  var wakeDescriptor: (() -> Int32?)?
  /// Seconds between two `idle` calls when no descriptor woke the loop.
  var idleInterval = 0.25

  static func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }

  /// The prompt as it should read now: what `idle` reported may have changed it (a current
  /// thread deleted meanwhile).
  var livePrompt: (() -> String)?

  private func printAbovePrompt(_ lines: [String]) {
    guard !lines.isEmpty else { return }
    rl_clear_visible_line()
    for line in lines { fputs(line + "\n", stdout) }
    fflush(stdout)
    if let prompt = livePrompt?() { rl_set_prompt(prompt) }
    rl_on_new_line()
    rl_forced_update_display()
  }

  /// The terminal changed width under a half-typed line. Terminals (tmux, VTE, kitty, iTerm2,
  /// Alacritty…) reflow the line to the new width themselves, and tmux moves rows that no
  /// longer fit above the cursor into the scrollback, where nothing can reach them. readline's
  /// `rl_resize_terminal` redraws from where the line started at the old width: a copy of the
  /// prompt stayed above when narrowed, a line of output was overwritten when widened. The
  /// terminal already shows the line right, so readline only learns the new width and lays the
  /// line out again into /dev/null: its record of rows and cursor then matches the screen, and
  /// the next key draws in place. (A terminal that does not reflow, xterm: Ctrl-L redraws.)
  private static func redrawAfterResize() {
    rl_reset_screen_size()
    guard let null = fopen("/dev/null", "w") else {
      rl_resize_terminal()
      return
    }
    // readline writes through both (`rl_outstream` for the line's text since 8.1).
    let (terminalStream, displayStream) = (rl_outstream, _rl_out_stream)
    rl_outstream = null
    _rl_out_stream = null
    rl_on_new_line()
    rl_forced_update_display()
    fflush(null)
    rl_outstream = terminalStream
    _rl_out_stream = displayStream
    fclose(null)
  }

  private func remember(_ bytes: [UInt8]) {
    // Completion leaves a trailing space after a word; history keeps the command as meant.
    let text = String(decoding: bytes, as: UTF8.self).trimmingSpaces()
    if let last = history_get(history_base + history_length - 1),
      String(cString: last.pointee.line) == text
    {
      return
    }
    add_history(text)
    guard let historyPath else { return }
    if append_history(1, historyPath) != 0 { write_history(historyPath) }
    history_truncate_file(historyPath, Int32(LineEditor.historyLimit))
  }

  private static func prepareDirectory(for path: String) {
    let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    try? FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    if !FileManager.default.fileExists(atPath: path) {
      FileManager.default.createFile(
        atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
    }
  }

  private static func installSignalHandlers() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
      interruptRequested = 1
      Interrupt.request()  // long work in progress polls this one
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(SIGINT, &action, nil)
    var resize = sigaction()
    resize.__sigaction_handler.sa_handler = { _ in resizeRequested = 1 }
    sigemptyset(&resize.sa_mask)
    sigaction(SIGWINCH, &resize, nil)
    var resume = sigaction()
    resume.__sigaction_handler.sa_handler = { _ in continued = 1 }
    sigemptyset(&resume.sa_mask)
    sigaction(SIGCONT, &resume, nil)
  }
}

private func lineHandler(_ line: UnsafeMutablePointer<CChar>?) {
  // With bracketed paste on, readline 8.2 ends the line itself after Ctrl-D (rl_eof_found),
  // and keeps doing so after every later line unless the flag is cleared.
  let readlineEndsTheLine = rl_eof_found != 0
  // Removed here, not after: readline would otherwise redraw the prompt for a next line.
  rl_callback_handler_remove()
  guard let line else {
    pendingLine = .endOfInput
    if !readlineEndsTheLine { fputs("\n", stdout) }
    rl_eof_found = 0
    return
  }
  let count = strlen(line)
  pendingLine = .line(
    Array(
      UnsafeBufferPointer(
        start: UnsafeRawPointer(line).assumingMemoryBound(to: UInt8.self), count: count)))
  free(line)
}

/// readline's attempted-completion hook: what the provider (the commands' declarations) offers,
/// or readline's own file names where it says a path goes, and at the image prompt.
private func forumCompletion(
  _ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32
) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
  rl_attempted_completion_over = 1
  let typed = rl_line_buffer.map { String(cString: $0) } ?? ""
  let before = String(typed.utf8.prefix(Int(start))) ?? ""
  let upToCursor = String(typed.utf8.prefix(Int(end))) ?? before
  let answer: CompletionAnswer
  switch completionKind {
  case .paths: answer = .files
  case .none: return nil
  case .commands: answer = completionProvider?(upToCursor) ?? .words([])
  }
  guard case .words(let words) = answer else {
    rl_attempted_completion_over = 0
    return nil  // readline falls back to file-name completion
  }
  completionCandidates = words
  return rl_completion_matches(text, completionGenerator)
}

private func completionGenerator(
  _ text: UnsafePointer<CChar>?, _ state: Int32
) -> UnsafeMutablePointer<CChar>? {
  let prefix = text.map { String(cString: $0) } ?? ""
  let matches = completionCandidates.filter { $0.hasPrefix(prefix) }
  guard Int(state) < matches.count else { return nil }
  return strdup(matches[Int(state)])
}
