#if canImport(FoundationEssentials)
  import FoundationEssentials
  @preconcurrency import Glibc  // stdout and stderr: set by the C library before main
#else
  import Foundation
#endif

/// One line typed or read, or why there is none.
enum InputEvent {
  case line([UInt8])
  /// A piped line longer than `PipedInput.maximumLine`; it is skipped, never run.
  case tooLong
  /// Ctrl-C: abandon what was being typed.
  case interrupted
  /// Ctrl-D on an empty line, or the end of piped input.
  case endOfInput
}

/// Where command lines and drafts come from: readline on a terminal, or a pipe.
protocol LineInput: AnyObject {
  /// True when a person is typing (prompts shown, confirmations asked).
  var isInteractive: Bool { get }
  /// Number of the last line read, for error messages from scripts.
  var lineNumber: Int { get }
  /// Reads one line. `history` says whether it is a command worth keeping in history;
  /// `completion` what to complete on Tab.
  func readLine(prompt: String, history: Bool, completion: CompletionKind) -> InputEvent
  /// The next line when it has already arrived whole (read from the pipe, not yet taken):
  /// `readLine` then returns it without waiting. Nil when it has not, or at a terminal.
  func waitingLine() -> [UInt8]?
}

extension LineInput {
  func waitingLine() -> [UInt8]? { nil }
}

enum CompletionKind {
  case commands
  case paths
  case none
}

/// What Tab offers at the command prompt: these words, or the file names readline knows.
enum CompletionAnswer: Equatable {
  case words([String])
  case files
}

/// Lines from a pipe or file: raw bytes, so invalid UTF-8 is seen and refused rather than
/// silently replaced. A line longer than `maximumLine` is reported and skipped.
final class PipedInput: LineInput {
  let isInteractive = false
  private(set) var lineNumber = 0
  private let descriptor: Int32
  private var buffer: [UInt8] = []
  private var start = 0
  private var atEnd = false
  static let maximumLine = 4 * 1024 * 1024

  init(descriptor: Int32 = STDIN_FILENO) { self.descriptor = descriptor }

  func readLine(prompt: String, history: Bool, completion: CompletionKind) -> InputEvent {
    var line: [UInt8] = []
    var overflow = false
    while true {
      if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
        append(buffer[start..<newline], to: &line, overflow: &overflow)
        start = newline + 1
        lineNumber += 1
        return overflow ? .tooLong : .line(trim(line))
      }
      append(buffer[start...], to: &line, overflow: &overflow)
      buffer.removeAll(keepingCapacity: true)
      start = 0
      if atEnd || !fill() {
        atEnd = true
        guard !line.isEmpty else { return .endOfInput }
        lineNumber += 1
        return overflow ? .tooLong : .line(trim(line))
      }
    }
  }

  func waitingLine() -> [UInt8]? {
    guard let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")),
      newline - start <= PipedInput.maximumLine
    else { return nil }
    return trim(Array(buffer[start..<newline]))
  }

  // Keeps at most `maximumLine` bytes of a line so a huge line cannot fill memory.
  private func append(_ bytes: ArraySlice<UInt8>, to line: inout [UInt8], overflow: inout Bool) {
    if overflow || line.count + bytes.count > PipedInput.maximumLine {
      overflow = true
    } else {
      line.append(contentsOf: bytes)
    }
  }

  private func trim(_ line: [UInt8]) -> [UInt8] {
    line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line
  }

  private func fill() -> Bool {
    // Whoever feeds the pipe may wait for the answer to what it sent before sending more.
    fflush(stdout)
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count > 0 {
        buffer.append(contentsOf: chunk[0..<count])
        return true
      }
      if count < 0 && errno == EINTR { continue }
      return false
    }
  }
}
