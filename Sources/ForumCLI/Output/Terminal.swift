#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// What we know about where output goes: a terminal or not, its width, colour, language.
struct Terminal {
  /// Widths and heights past this (`COLUMNS=100000000`, a huge window) are taken as this:
  /// padding every line to the reported width must stay cheap.
  static let maximumSize = 1000

  let isInteractive: Bool
  let stdoutIsTerminal: Bool
  let useColor: Bool
  let trueColor: Bool
  let japanese: Bool
  private let fixedWidth: Int?
  private let fixedHeight: Int?

  init(environment: [String: String], noColorFlag: Bool) {
    stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
    isInteractive = isatty(STDIN_FILENO) == 1 && stdoutIsTerminal
    useColor =
      stdoutIsTerminal && !noColorFlag && environment["NO_COLOR"].map(\.isEmpty) ?? true
      && environment["TERM"] != "dumb"
    let colorTerm = environment["COLORTERM"] ?? ""
    trueColor = colorTerm == "truecolor" || colorTerm == "24bit"
    let language =
      environment["LC_ALL"].flatMap { $0.isEmpty ? nil : $0 }
      ?? environment["LC_MESSAGES"].flatMap { $0.isEmpty ? nil : $0 }
      ?? environment["LANG"] ?? ""
    japanese = language.hasPrefix("ja")
    fixedHeight = environment["LINES"].flatMap(Int.init).flatMap { $0 >= 5 ? $0 : nil }
    fixedWidth = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 >= 20 ? $0 : nil }
  }

  /// Rows of the terminal (`$LINES`, or 24 when unknown), for full-size image previews.
  var height: Int {
    min(
      windowSize().flatMap { $0.ws_row >= 5 ? Int($0.ws_row) : nil } ?? fixedHeight ?? 24,
      Terminal.maximumSize)
  }

  /// Columns to fit lines into: the terminal's, `$COLUMNS`, or 80 when output is piped.
  var width: Int {
    min(
      windowSize().flatMap { $0.ws_col >= 20 ? Int($0.ws_col) : nil } ?? fixedWidth ?? 80,
      Terminal.maximumSize)
  }

  /// Asked each time, not cached: the window may have been resized since the last command.
  private func windowSize() -> winsize? {
    guard stdoutIsTerminal else { return nil }
    var size = winsize()
    return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 ? size : nil
  }
}

/// SGR styles, emitted only when colour is on.
struct Style {
  let enabled: Bool

  func apply(_ code: String, _ text: String) -> String {
    enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }

  func bold(_ text: String) -> String { apply("1", text) }
  func dim(_ text: String) -> String { apply("2", text) }
  /// Your own posts and name.
  func mine(_ text: String) -> String { apply("1;32", text) }
  func number(_ text: String) -> String { apply("33", text) }
  func author(_ text: String) -> String { apply("36", text) }
  func error(_ text: String) -> String { apply("31", text) }
}
