import Forum
import Foundation

/// Thread images on the terminal: a drawn preview where the terminal can show one, otherwise
/// the one-line description; the seed app's bubble where there is no image.
enum ImagePresenter {
  static func placeholder(style: Style) -> [String] {
    ImagePreview.placeholder.map(style.dim)
  }

  /// Refuses, before anything is stored, an image that would not preview.
  static func verifyDecodable(_ image: PreparedImage) throws {
    try ImageDecoder.verify(image)
  }

  /// The drawn picture for `bytes` as stored, or nil when this output should get the text line.
  /// A picture that cannot be drawn (a WebP) throws; callers fall back to the text line.
  static func preview(
    _ bytes: [UInt8], mode: ImageMode, box: PreviewBox, terminal: Terminal, colorEnabled: Bool,
    environment: [String: String]
  ) throws -> [String]? {
    guard
      let renderMode = mode.renderMode(
        environment: environment, isTerminal: terminal.stdoutIsTerminal,
        colorEnabled: colorEnabled)
    else { return nil }
    let image = try ImagePreparer.prepare(Data(bytes))
    return try ImagePreview.lines(
      image, mode: renderMode, box: box, background: .terminalBackground(environment: environment))
  }
}
