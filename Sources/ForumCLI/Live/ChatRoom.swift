import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// A live room at the terminal, as in the chat seeds: the last messages on entry, then every line
/// typed is posted, everyone's lines arrive as they are sent (yours marked as yours), `/leave` or
/// Ctrl-D leaves, `/COMMAND` runs a command and `//text` posts a line starting with `/`.
///
/// A room is made of a `Source`; `chat THREAD` gives a thread's (`ChatRoom.thread`). Another
/// kind of conversation (direct messages) opens a room the same way, with its own source.
struct ChatRoom {
  /// What a room is made of.
  struct Source {
    /// The line said on entry (already safe to print), e.g. `#3 Lunch — chat`.
    let title: String
    /// The prompt while in the room.
    let prompt: String
    /// Lines for the last messages, oldest first (what `arrivals` would show, but at entry).
    let history: () throws -> [String]
    /// Posts one typed line.
    let post: (String) throws -> Void
    /// The feed class whose changes may be this room's.
    let className: String
    /// Lines for the room's part of `changes` (others' and your own lines, marked).
    let arrivals: (_ changes: [Change]) throws -> [String]
    /// Whether a change of `className` is the room's; the others go to the prompt's own
    /// handler (a reply elsewhere, a message from someone else), so nothing is skipped.
    let belongs: (Change) -> Bool
    /// False once the room is gone (its thread deleted): the room then closes.
    let isOpen: () -> Bool
    /// Run after the room closes (give the prompt its state back).
    var onLeave: () -> Void = {}
  }

  let source: Source
  let session: Session

  /// Runs the room until `/leave`, Ctrl-D, the room's end or `/quit` (returned as `.quit`).
  func run() throws -> Session.Outcome {
    let messages = session.messages
    // A room opened by a one-shot `forum chat N` has no prompt that started the live view.
    if !session.live.hasHandler(for: Board.threadClassName) { session.startLiveView() }
    if session.live.cursor == nil { _ = session.liveLines(force: true) }
    // The room is live: what its commands print must show now, not when it is left.
    session.endPaging()
    print(session.style.bold(source.title))
    for line in try source.history() { print(line) }
    print(session.style.dim(messages.chatHint))
    var replaced: LiveFeed.Handler?
    replaced = session.live.setHandler(for: source.className) { changes, session in
      let others = changes.filter { !source.belongs($0) }
      let elsewhere = try others.isEmpty ? [] : (replaced?(others, session) ?? [])
      return try source.arrivals(changes.filter(source.belongs)) + elsewhere
    }
    defer {
      session.live.setHandler(for: source.className, replaced)
      source.onLeave()
    }
    let editor = session.input as? LineEditor
    let outerPrompt = editor?.livePrompt
    editor?.livePrompt = { source.prompt }
    defer { editor?.livePrompt = outerPrompt }
    while true {
      for line in session.liveLines(force: true) { print(line) }
      guard source.isOpen() else { return .next }
      editor?.idle = { session.liveLines(force: false) }
      editor?.wakeDescriptor = { session.live.descriptor }
      editor?.idleInterval = session.live.interval
      editor?.takesWholePastes = true
      let event = session.input.readLine(
        prompt: source.prompt, history: true, completion: .commands)
      editor?.takesWholePastes = false
      editor?.idle = nil
      switch event {
      case .endOfInput: return .next
      case .interrupted: continue
      case .tooLong: continue
      case .line(let bytes):
        let text: String
        do {
          text = try decodeUTF8(bytes, field: "line")
        } catch {
          report(error)
          continue
        }
        let pasted = (session.input as? LineEditor)?.lastLineWasPasted == true
        if pasted {
          try postPaste(first: text)
          continue
        }
        if text.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
        if text.hasPrefix("/") && !text.hasPrefix("//") {
          let command = CommandWords(line: String(text.dropFirst()))
          let name = command.first?.lowercased()
          if name == "leave" || name == "back" { return .next }
          if try runCommand(command) == .quit { return .quit }
          continue
        }
        do {
          try source.post(text.hasPrefix("//") ? String(text.dropFirst()) : text)
          erase(typed: text)
          if source.className == Board.commentClassName { session.sayWhomMentionsMiss(text) }
        } catch {
          // The typed line stays on screen (and in history, ↑) for another try.
          report(error)
        }
      }
    }
  }

  /// A command inside the room, reported like one at the prompt; the room stays open.
  private func runCommand(_ words: CommandWords) throws -> Session.Outcome {
    let thread = session.currentThread
    defer { if source.isOpen() { session.navigation.enter(thread) } }
    do {
      Interrupt.clear()
      return try session.execute(words)
    } catch {
      report(error)
      return .next
    }
  }

  func report(_ error: Error) {
    ForumMain.report(
      CLIError(error), json: session.jsonErrors, line: nil, japanese: session.terminal.japanese)
  }

  /// The typed line comes back as a posted message marked as yours: take the echo off the
  /// screen so it is not there twice.
  private func erase(typed text: String) {
    guard session.terminal.stdoutIsTerminal, session.input.isInteractive else { return }
    let cells = SafeText.width(source.prompt) + SafeText.width(SafeText.sanitize(text))
    let rows = max(1, (cells + session.terminal.width - 1) / max(1, session.terminal.width))
    guard rows <= 3 else { return }
    fputs(String(repeating: "\u{1B}[1A\u{1B}[2K", count: rows) + "\r", stdout)
    fflush(stdout)
  }
}

// MARK: A thread as a room

extension ChatRoom {
  /// How many comments a room shows on entry.
  static let historyCount = 20
  /// How many arrivals a room prints at once; the rest are said as a gap.
  static let burstLimit = 50

  /// `chat THREAD`: the thread's comments as a room's messages.
  static func thread(_ thread: ForumThread, in session: Session) -> Source {
    let board = session.board
    var shown = 0
    let title = SafeText.truncate(SafeText.sanitize(thread.title), to: 60)
    session.navigation.enter(thread.number)
    let read = ReadMark(position: thread.readPosition ?? 0) {
      try board.markRead(thread, upTo: $0)
    }
    return Source(
      title: "#\(thread.number) \(title) — \(session.messages.chatTitle)",
      prompt: "#\(thread.number) chat> ",
      history: {
        let (last, total) = try board.comments(of: thread, after: 0, limit: historyCount)
        shown = last.last?.number ?? thread.lastCommentNumber
        var lines: [String] = []
        if total > last.count {
          lines.append(
            session.style.dim(session.messages.earlierInRoom(total - last.count, thread.number)))
        }
        if last.isEmpty {
          lines.append(session.style.dim(session.messages.roomIsQuiet))
          // Opened: the thread itself is no longer new to you.
          if thread.readPosition == nil { try? board.markRead(thread, upTo: 0) }
        }
        read.shown(last.map(\.number), after: 0, complete: total == last.count)
        return lines + last.flatMap { chatLines($0, session) }
      },
      post: { text in
        let comment = try board.addComment(to: thread.number, text: text)
        _ = comment
      },
      className: Board.commentClassName,
      arrivals: { here in
        var lines: [String] = []
        for change in here where change.kind == .deleted {
          if let number = change.number, number <= shown {
            lines.append(
              session.style.dim(session.messages.commentDeleted("\(thread.number)/\(number)")))
          }
        }
        guard here.contains(where: { $0.kind == .created }) else { return lines }
        let (newest, total) = try board.comments(of: thread, after: shown, limit: burstLimit)
        read.shown(newest.map(\.number), after: shown, complete: total == newest.count)
        if total > newest.count {
          lines.append(
            session.style.dim(
              session.messages.commentGap(
                total - newest.count, since: shown, command: "/show \(thread.number)")))
        }
        shown = newest.last?.number ?? shown
        return lines + newest.flatMap { chatLines($0, session) }
      },
      belongs: { $0.parentId == thread.objectId },
      isOpen: { session.currentThread == thread.number },
      onLeave: {
        session.navigation.saw(upTo: shown, in: thread.number)
      })
  }

  /// One message: `12:04 bob: text`, yours as `12:04 alice (you): text` in your colour; a long
  /// or many-line text wraps under it.
  static func chatLines(_ comment: ForumComment, _ session: Session) -> [String] {
    let style = session.style
    let time = clock(comment.createDate)
    let you = comment.isMine ? " (\(session.messages.you))" : ""
    let name = SafeText.truncate(SafeText.sanitize(comment.authorName), to: 24) + you
    let head = "\(time) \(name): "
    let width = max(20, session.terminal.width)
    let text = SafeText.sanitize(comment.text, keepNewlines: true)
    let indent = String(repeating: " ", count: min(SafeText.width(head), width / 2))
    var wrapped = SafeText.wrap(text, to: max(10, width - SafeText.width(head)))
    if wrapped.isEmpty { wrapped = [""] }
    let who = comment.isMine ? style.mine(name) : style.author(name)
    var lines = ["\(style.dim(time)) \(who): \(wrapped[0])"]
    lines += wrapped.dropFirst().map { indent + $0 }
    return lines
  }

  /// `12:04` in the local time zone.
  static func clock(_ milliseconds: Int64) -> String {
    var seconds = time_t(milliseconds / 1000)
    var parts = tm()
    tzset()
    guard localtime_r(&seconds, &parts) != nil else { return "--:--" }
    func twoDigits(_ value: Int32) -> String { (value < 10 ? "0" : "") + String(value) }
    return twoDigits(parts.tm_hour) + ":" + twoDigits(parts.tm_min)
  }
}

/// What a live view has shown, as read: it moves your read position only over comments or
/// messages you have all seen (a burst said as a gap, or earlier ones not shown, leave it).
final class ReadMark {
  private(set) var position: Int
  private let mark: (Int) throws -> Void

  init(position: Int, mark: @escaping (Int) throws -> Void) {
    self.position = position
    self.mark = mark
  }

  /// `numbers` (oldest first) were shown, the ones after `previous`; `complete` when none
  /// after `previous` was left out.
  func shown(_ numbers: [Int], after previous: Int, complete: Bool) {
    guard let first = numbers.first, let last = numbers.last, last > position else { return }
    guard (complete && position >= previous) || position >= first - 1 else { return }
    // A failed write only leaves the position where it was; the room goes on.
    guard (try? mark(last)) != nil else { return }
    position = last
  }
}
