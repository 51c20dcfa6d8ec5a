import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// Questions and drafts: what a command reads after its own line.
extension Session {
  /// One line of input for a question; Ctrl-C or end of input cancels the command.
  func ask(_ question: String, completion: CompletionKind = .none) throws -> String {
    consume(.line)
    switch input.readLine(
      prompt: input.isInteractive ? question : "", history: false, completion: completion)
    {
    case .line(let bytes): return try decodeUTF8(bytes, field: "input")
    case .tooLong: throw DatastoreError(.invalid, field: "input", reason: InputReason.answerTooLong)
    case .interrupted: throw oneShot ? CLIError.interrupted : CLIError.cancelled
    case .endOfInput: throw CLIError.cancelled
    }
  }

  /// Several lines, ending with a line holding a single `.` (or the end of piped input).
  /// A bad line (invalid UTF-8, far too long) fails the draft only at its end: the lines after
  /// it are still draft text, and must never run as commands in a script.
  ///
  /// At a terminal the draft is kept on disk as it is typed (for `target`, with `prefix`
  /// lines before it), a line holding `\e` (or `edit`) hands it to `$VISUAL`/`$EDITOR`, and
  /// Ctrl-C discards it.
  func draft(
    _ heading: String, for target: DraftTarget? = nil, prefix: [String] = [],
    edit: Bool = false
  ) throws -> String {
    consume(.block)
    let keep = input.isInteractive ? target : nil
    if let keep { activeDraft = keep }
    if input.isInteractive && edit { return try compose("", for: keep, prefix: prefix) }
    if input.isInteractive { print(style.dim(heading)) }
    var lines: [String] = []
    var total = 0
    var failure: Error?
    let tooLong = DatastoreError(
      .invalid, field: "text", reason: InputReason.draftTooLong(limit: PostRules.bodyLimit))
    func fail(_ error: Error) {
      failure = error
      failureLine = input.lineNumber
      lines = []
    }
    while true {
      switch input.readLine(
        prompt: input.isInteractive ? "> " : "", history: false, completion: .none)
      {
      case .line(let bytes):
        if bytes == [UInt8(ascii: ".")] {
          if let failure { throw failure }
          return lines.joined(separator: "\n")
        }
        if input.isInteractive && (bytes == Array("\\e".utf8)) {
          return try compose(lines.joined(separator: "\n"), for: keep, prefix: prefix)
        }
        guard failure == nil else { continue }
        do {
          let line = try decodeUTF8(bytes, field: "text")
          total += line.count + 1
          // Stop collecting early; PostRules gives the precise message.
          if total > PostRules.bodyLimit * 4 { throw tooLong }
          lines.append(line)
          if let keep { keepDraft((prefix + lines).joined(separator: "\n"), for: keep) }
        } catch {
          fail(error)
        }
      case .tooLong:
        if failure == nil { fail(tooLong) }
      case .endOfInput where !input.isInteractive:
        if let failure { throw failure }
        return lines.joined(separator: "\n")
      case .interrupted:
        if let keep { discardDraft(keep) }  // Ctrl-C: the person let it go
        throw oneShot ? CLIError.interrupted : CLIError.cancelled
      case .endOfInput:
        throw CLIError.cancelled  // Ctrl-D or a hang-up: the draft stays for next time
      }
    }
  }

  /// Hands the text to the editor and returns what it leaves.
  private func compose(_ text: String, for target: DraftTarget?, prefix: [String]) throws
    -> String
  {
    guard let command = ExternalEditor.command(environment: options.environment) else {
      throw CLIError.usage(messages.noEditor)
    }
    let edited = try ExternalEditor.edit(text, command: command, environment: options.environment)
    if let target { keepDraft((prefix + [edited]).joined(separator: "\n"), for: target) }
    return edited
  }

  /// Where unsent drafts are kept: this board's, for this profile. The first time, drafts an
  /// older forum kept for no board or profile in particular are put aside (never offered, to
  /// no one), and where they are is said once.
  var drafts: DraftStore {
    let store = DraftStore(
      root: options.draftsDirectory, boardId: board.boardId, profile: board.profileName)
    if !olderDraftsSetAside {
      olderDraftsSetAside = true
      let moved = store.setAsideOlderDrafts()
      if moved > 0 {
        ForumMain.writeError(
          "forum: "
            + messages.olderDraftsSetAside(
              moved, directory: SafeText.sanitize(store.unsortedDirectory)))
      }
    }
    return store
  }

  /// Keeps the text typed so far for `target` on disk. When it cannot be written (a full
  /// disk), that is said once, and the text is held so it can be printed if it is not posted.
  func keepDraft(_ text: String, for target: DraftTarget) {
    activeDraft = target
    do {
      try drafts.save(text, for: target)
      unsavedDraft = nil
    } catch let failure as DraftStore.SaveFailure {
      if unsavedDraft == nil {
        ForumMain.writeError(
          "forum: "
            + (failure.reason.map { messages.draftNotSaved(SafeText.sanitize($0)) }
              ?? messages.tooManyDrafts(
                DraftStore.limit, directory: SafeText.sanitize(drafts.root))))
      }
      unsavedDraft = text
    } catch {
      unsavedDraft = text
    }
  }

  /// After a command with a draft at the terminal ended without posting: where the text is.
  /// Kept on disk (and offered again), printed when it could not be kept, or, when nothing was
  /// typed, simply nothing saved.
  func sayWhereTheDraftIs(_ target: DraftTarget) {
    if let unsaved = unsavedDraft {
      print(messages.draftPrinted)
      for line in SafeText.sanitize(unsaved, keepNewlines: true).split(
        separator: "\n", omittingEmptySubsequences: false)
      {
        print("  " + line)
      }
      unsavedDraft = nil
    } else if drafts.load(target) != nil {
      print(style.dim(messages.draftKept(target.label(messages))))
    } else {
      print(messages.cancelled)
    }
  }

  /// At a terminal, a draft for `target` left from a refused post or a crash on this board by
  /// this profile: shown, and used if the person says so (or discarded). Returns its text when
  /// it is to be posted.
  func offerSavedDraft(_ target: DraftTarget) throws -> String? {
    guard input.isInteractive, let saved = drafts.load(target) else { return nil }
    let label = target.label(messages)
    print(style.dim(messages.savedDraftHeading(label)))
    for line in SafeText.sanitize(saved, keepNewlines: true).split(
      separator: "\n", omittingEmptySubsequences: false)
    {
      print("  " + line)
    }
    while true {
      let answer = try ask(messages.useSavedDraft(label)).trimmingSpaces().lowercased()
      if ["y", "yes", "はい"].contains(answer) || answer.isEmpty {
        activeDraft = target
        return saved
      }
      if ["n", "no", "いいえ"].contains(answer) {
        discardDraft(target)
        return nil
      }
      print(style.dim(messages.answerYesOrNo))
    }
  }

  /// The text for `target` when none was given: its saved draft if the person takes it, else a
  /// new draft. Written out, not as `try offerSavedDraft(…) ?? draft(…)`: Swift 6.3 loses an
  /// error thrown inside `??`'s autoclosure when it captures `guard case` bindings (reply's
  /// thread and comment), so a cancelled draft went on as empty text, or crashed (issue 28 H8).
  func savedDraftOrNew(
    _ heading: String, for target: DraftTarget, edit: Bool = false
  ) throws -> String {
    if let saved = try offerSavedDraft(target) { return saved }
    return try draft(heading, for: target, edit: edit)
  }

  /// The post went through, or the person let the draft go.
  func discardDraft(_ target: DraftTarget) {
    drafts.discard(target)
    if activeDraft == target {
      activeDraft = nil
      unsavedDraft = nil
    }
  }

  /// Reads and drops what is left of a refused command's draft, so that none of its lines runs
  /// as a command.
  func skipPendingDraft() {
    let parts = pendingDraft
    pendingDraft = []
    for part in parts {
      switch part {
      case .line:
        if case .endOfInput = input.readLine(prompt: "", history: false, completion: .none) {
          return
        }
      case .block:
        reading: while true {
          switch input.readLine(prompt: "", history: false, completion: .none) {
          case .line(let bytes) where bytes == [UInt8(ascii: ".")]: break reading
          case .line, .tooLong: continue
          case .endOfInput, .interrupted: return
          }
        }
      case .room:
        // What would have been said in the room; only its `/leave` hands lines back.
        reading: while true {
          switch input.readLine(prompt: "", history: false, completion: .none) {
          case .line(let bytes):
            // As the room reads them: `/leave` and `/back` leave, `//…` and the rest are said.
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.hasPrefix("/"), !text.hasPrefix("//") else { continue }
            let name = CommandWords(line: String(text.dropFirst())).first?.lowercased()
            if name == "leave" || name == "back" { break reading }
          case .tooLong: continue
          case .endOfInput, .interrupted: return
          }
        }
      }
    }
  }

  func confirm(_ what: String) throws {
    print(messages.willDelete(what))
    let answer = try ask(messages.confirmDelete).lowercased()
    guard ["y", "yes", "はい"].contains(answer.trimmingSpaces()) else {
      throw CLIError.cancelled
    }
  }

  private func consume(_ part: DraftPart) {
    if let index = pendingDraft.firstIndex(where: { $0 == part }) {
      pendingDraft.removeSubrange(...index)
    }
  }
}

/// Changing text that exists: the old text is offered for editing.
extension Session {
  /// One line, starting as `old` at the prompt (readline's buffer filled in); a script answers
  /// with a new line.
  func askPrefilled(_ question: String, _ old: String) throws -> String {
    if let editor = input as? LineEditor { editor.prefill = old }
    return try ask(question)
  }

  /// New text for `old`: at the prompt in `$VISUAL`/`$EDITOR` (with `edit`, when one is set, or
  /// when the text has several lines), else on one line filled in with it; in a script the
  /// lines up to a single `.`.
  func revise(_ old: String, heading: String, edit: Bool) throws -> String {
    guard input.isInteractive else { return try draft(heading) }
    let editor = ExternalEditor.command(environment: options.environment)
    if let editor, edit || old.contains("\n") {
      return try ExternalEditor.edit(old, command: editor, environment: options.environment)
    }
    if edit || old.contains("\n") { throw CLIError.usage(messages.multilineNeedsEditor) }
    return try askPrefilled("> ", old)
  }
}
