import Forum
import Foundation

/// Previews of thread images in the terminal.
enum ImagePresenter {
  /// The seed app's speech-bubble icon, for a thread without an image.
  static func placeholder(style: Style) -> [String] {
    [" ╭─────╮", " │ ··· │", " ╰┬────╯", "  ╵"].map(style.dim)
  }

  static func verifyDecodable(_ image: PreparedImage) throws {}

  static func preview(
    _ bytes: [UInt8], format: ImageFormat, columns: Int, mode: ImageMode,
    environment: [String: String], trueColor: Bool
  ) throws -> [String] {
    throw CLIError.failed("no preview")
  }
}
