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
    case .tooLong: throw DatastoreError(.invalid, field: "input", detail: "line is too long")
    case .interrupted, .endOfInput: throw CLIError.cancelled
    }
  }

  /// Several lines, ending with a line holding a single `.` (or the end of piped input).
  /// A bad line (invalid UTF-8, far too long) fails the draft only at its end: the lines after
  /// it are still draft text, and must never run as commands in a script.
  func draft(_ heading: String) throws -> String {
    consume(.block)
    if input.isInteractive { print(style.dim(heading)) }
    var lines: [String] = []
    var total = 0
    var failure: Error?
    let tooLong = DatastoreError(
      .invalid, field: "text", detail: "text is longer than \(PostRules.bodyLimit) characters")
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
        guard failure == nil else { continue }
        do {
          let line = try decodeUTF8(bytes, field: "text")
          total += line.count + 1
          // Stop collecting early; PostRules gives the precise message.
          if total > PostRules.bodyLimit * 4 { throw tooLong }
          lines.append(line)
        } catch {
          fail(error)
        }
      case .tooLong:
        if failure == nil { fail(tooLong) }
      case .endOfInput where !input.isInteractive:
        if let failure { throw failure }
        return lines.joined(separator: "\n")
      case .interrupted, .endOfInput: throw CLIError.cancelled
      }
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
