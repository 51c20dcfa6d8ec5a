import Datastore
import Forum

#if canImport(FoundationEssentials)
  import FoundationEssentials
  import Glibc
#else
  import Foundation
#endif

/// `new`: posts a thread, asking for what the line did not give.
enum NewCommand: ForumCommand {
  static let name = "new"
  static let info = CommandInfo(
    name: name,
    summary: Localized("post a thread; asks for what is missing", "スレッドを投稿 (足りないものは尋ねます)"),
    details: Localized(
      "The description ends with a line holding a single `.`; `\\e` on a line of its own opens "
        + "$VISUAL or $EDITOR. The image may be PNG, JPEG, GIF or WebP up to 5 MB; location and "
        + "camera data are removed before storing. In a script `new` reads the title line and "
        + "the description up to `.`; an image comes only with --image.",
      "本文は「.」だけの行で終わります。`\\e` だけの行で $VISUAL か $EDITOR を開きます。"
        + "画像は 5 MB までの PNG、JPEG、GIF、WebP で、位置情報やカメラ情報は保存前に削除します。"
        + "スクリプトではタイトルの行と「.」までの本文を読みます。画像は --image でのみ付けられます。"),
    parameters: [title, description, image, edit])

  static let title = Option<String>(
    "title", value: "T", help: Localized("the title (1 to 100 characters)", "タイトル (1〜100 文字)"))
  static let description = Option<String>(
    "description", value: "D", help: Localized("the text; without it, asked for", "本文 (なければ尋ねます)"))
  static let image = Option<FilePath>(
    "image",
    help: Localized(
      "a PNG, JPEG, GIF or WebP file up to 5 MB (-: standard input)",
      "5 MB までの PNG、JPEG、GIF、WebP (-: 標準入力)"))
  static let edit = Flag(
    "edit", help: Localized("write the text in $VISUAL or $EDITOR", "本文を $VISUAL か $EDITOR で書く"))

  /// An option without its value counts as missing: its answer would have been read.
  static func draftParts(_ words: CommandWords) -> [DraftPart] {
    let parsed = try? Invocation(
      words, info: info, insideThread: false, messages: Messages(japanese: false), lenient: true)
    guard let parsed else { return [.line, .block] }
    if parsed[GlobalOptions.helpFlag] || parsed.given(title) { return [] }
    return parsed.given(description) ? [.line] : [.line, .block]
  }

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let messages = session.messages
    let givenTitle = invocation[Self.title]
    let imagePath = invocation[Self.image]?.path
    // Through the ssh door no file of the server is read: the picture comes on standard input.
    if session.options.door != nil, let imagePath, imagePath != "-" {
      throw CLIError.usage(messages.doorImageFromStandardInput)
    }
    // Standard input holds the picture: the description is not read from it too.
    if imagePath == "-", isatty(STDIN_FILENO) != 0 {
      throw CLIError.usage(messages.imageFromTerminal)
    }
    var title: String
    var description: String
    if givenTitle == nil, invocation[Self.description] == nil,
      let saved = try session.offerSavedDraft(.thread)
    {
      let lines = saved.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
      title = String(lines[0])
      description = lines.count > 1 ? String(lines[1]) : ""
    } else {
      // Not `givenTitle ?? ask(…)`: see `Session.savedDraftOrNew`.
      if let givenTitle {
        title = givenTitle
      } else {
        title = try session.ask(messages.titlePrompt)
      }
      _ = try PostRules.title(title)  // refuse a bad title before asking for more
      if givenTitle == nil && session.input.isInteractive {
        session.keepDraft(title, for: .thread)
      }
      if let given = invocation[Self.description] {
        description = given
      } else if imagePath == "-" {
        description = ""
      } else if givenTitle != nil && !session.input.isInteractive && !session.oneShot {
        description = ""  // a script line that gives the title is complete
      } else {
        description = try session.draft(
          messages.descriptionPrompt, for: givenTitle == nil ? .thread : nil, prefix: [title],
          edit: invocation[edit])
      }
    }
    _ = try PostRules.title(title)
    _ = try PostRules.description(description)
    var image: PreparedImage?
    if let imagePath {
      image = try ImageAttachment.load(path: imagePath, limit: session.board.fileSizeLimit)
    } else if session.options.door == nil
      && (session.atPrompt || (givenTitle == nil && session.input.isInteractive))
    {
      // At the prompt a picture is asked for whatever the line gave; Enter posts without.
      image = try askForImage(in: session)
    }
    let thread = try session.board.createThread(
      title: title, description: description, image: image)
    if let draft = session.activeDraft { session.discardDraft(draft) }
    if session.json {
      session.emit(thread.json)
    } else {
      print(messages.posted("#\(thread.number)"))
    }
    return .next
  }

  /// Asks for an image path until one attaches or the answer is empty; a refused path is said
  /// and asked again, so the title and description typed so far are never lost.
  static func askForImage(in session: Session) throws -> PreparedImage? {
    while true {
      let answer: String
      do {
        answer = try session.ask(session.messages.imagePrompt, completion: .paths)
      } catch CLIError.cancelled where !session.input.isInteractive {
        return nil
      }
      guard let path = ImageAttachment.typedPath(answer) else { return nil }
      do {
        return try ImageAttachment.load(path: path, limit: session.board.fileSizeLimit)
      } catch {
        ForumMain.report(
          CLIError(error), json: false, line: nil, japanese: session.terminal.japanese)
        print(session.style.dim(session.messages.imageAskAgain))
      }
    }
  }
}
