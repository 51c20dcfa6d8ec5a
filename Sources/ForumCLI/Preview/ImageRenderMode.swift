/// How a picture reaches the screen.
enum ImageRenderMode: Equatable, Sendable {
  /// Half-block characters in 24-bit colour.
  case trueColorBlocks
  /// Half-block characters in the xterm 256-colour palette.
  case paletteBlocks
  /// The kitty graphics protocol (also Ghostty).
  case kitty
  /// iTerm2's inline images (also WezTerm).
  case iterm
}

extension ImageMode {
  /// The way to draw images for this `--images` choice, or nil for the plain text line.
  /// `auto` draws only on a colour terminal and picks what the terminal announces in its
  /// environment; an explicit choice is honoured as given (`none` never draws).
  func renderMode(environment: [String: String], isTerminal: Bool, colorEnabled: Bool)
    -> ImageRenderMode?
  {
    let term = environment["TERM"] ?? ""
    let colorTerm = environment["COLORTERM"] ?? ""
    let blocks: ImageRenderMode =
      colorTerm == "truecolor" || colorTerm == "24bit" ? .trueColorBlocks : .paletteBlocks
    switch self {
    case .none: return nil
    case .kitty: return .kitty
    case .iterm: return .iterm
    case .blocks: return blocks
    case .auto:
      guard isTerminal, colorEnabled else { return nil }
      // tmux and screen keep KITTY_WINDOW_ID and TERM_PROGRAM from the outer terminal but do
      // not pass image escapes through.
      if environment["TMUX"] != nil || term.hasPrefix("screen") || term.hasPrefix("tmux") {
        return blocks
      }
      if environment["KITTY_WINDOW_ID"] != nil || term == "xterm-kitty" || term == "xterm-ghostty" {
        return .kitty
      }
      if ["iTerm.app", "WezTerm"].contains(environment["TERM_PROGRAM"] ?? "") { return .iterm }
      return blocks
    }
  }
}

/// A colour on screen.
struct RGB: Equatable, Sendable {
  var r: UInt8
  var g: UInt8
  var b: UInt8

  static let black = RGB(r: 0, g: 0, b: 0)
  static let white = RGB(r: 255, g: 255, b: 255)

  /// The terminal's background as far as the environment tells (rxvt, Konsole and others set
  /// `COLORFGBG="15;0"`); dark when unknown. Semi-transparent pixels are blended onto it.
  static func terminalBackground(environment: [String: String]) -> RGB {
    guard let field = environment["COLORFGBG"]?.split(separator: ";").last,
      let index = Int(field)
    else { return .black }
    return index == 7 || index >= 9 ? .white : .black
  }
}
