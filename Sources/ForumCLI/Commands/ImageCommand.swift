import Datastore
import Forum

/// `image`: a thread's image drawn large, or its stored bytes saved to a file or stdout.
enum ImageCommand: ForumCommand {
  static let name = "image"
  static let info = CommandInfo(
    name: name,
    summary: Localized(
      "show a thread's image large, or save it to disk", "スレッドの画像を大きく表示、または保存"),
    details: Localized(
      "--save writes the stored bytes exactly; an existing file is kept unless --force. "
        + "--save - writes them to standard output.",
      "--save は保存されたバイトをそのまま書き出します。既存のファイルは --force がなければ"
        + "上書きしません。--save - は標準出力に書きます。"),
    parameters: [thread, save, force])

  static let thread = Argument<ThreadNumber>(optional: true)
  static let save = Option<FilePath>(
    "save", value: "PATH|-",
    help: Localized("write the stored bytes to a file (- : stdout)", "保存されたバイトをファイルへ (- は標準出力)"))
  static let force = Flag(
    "force", help: Localized("replace an existing file", "既存のファイルを置き換える"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let number = try session.thread(invocation[thread], example: "image 12")
    let thread = try session.board.thread(number)
    guard let image = thread.image else {
      throw DatastoreError(.notFound, reason: BoardReason.noImage(thread: number))
    }
    guard let path = invocation[save]?.path else {
      if session.json {
        // What `show --json` says of the image, with the stored file's name and its thread.
        guard case .object(var fields) = image.json else { return .next }
        fields["name"] = .string(image.fileName)
        fields["thread"] = .int(Int64(number))
        session.emit(.object(fields))
        return .next
      }
      session.printLines(session.imageBlock(for: thread, large: true))
      return .next
    }
    if session.options.door != nil && path != "-" {
      throw CLIError.usage(session.messages.doorSaveToStandardOutput)
    }
    let bytes = try session.board.imageBytes(of: thread)
    if path == "-" {
      try ImageAttachment.writeToStandardOutput(bytes)
      return .next
    }
    try ImageAttachment.save(bytes, to: path, overwrite: invocation[force])
    if session.json {
      session.emit(.object(["saved": .string(path), "fileSize": .int(Int64(bytes.count))]))
    } else {
      print(session.messages.saved(ImageFile.formatSize(bytes.count), SafeText.sanitize(path)))
    }
    return .next
  }
}
