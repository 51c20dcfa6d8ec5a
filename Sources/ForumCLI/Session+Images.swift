import Forum

#if canImport(Glibc)
  import Glibc
#endif

extension Session {
  /// The image part of a thread view: a preview on a colour terminal, the text line otherwise,
  /// and the placeholder bubble when the thread has none.
  func imageBlock(for thread: ForumThread, large: Bool) -> [String] {
    guard let image = thread.image else { return ImagePreview.placeholder.map(style.dim) }
    let line = renderer.imageLine(image)
    // Decide first: a pipe or a colourless terminal gets the line without reading the bytes.
    guard
      let mode = options.images.renderMode(
        environment: options.environment, isTerminal: terminal.stdoutIsTerminal,
        colorEnabled: useColor)
    else { return [line] }
    let box =
      large
      ? PreviewBox.full(terminalColumns: terminal.width, terminalRows: terminal.height)
      : PreviewBox.thumbnail(terminalColumns: terminal.width)
    do {
      let stored = image.storedImage(try board.imageBytes(of: thread))
      let drawn = try ImagePreview.lines(
        stored, mode: mode, box: box,
        background: .terminalBackground(environment: options.environment))
      return drawn + [line]
    } catch let missing as ImageLibraryUnavailable {
      // Said once (on stderr, like an error) rather than under every such picture.
      if missing.firstTime() {
        ForumMain.writeError(
          "forum: " + SafeText.sanitize(messages.imageLibraryUnavailable(missing)))
      }
      return [line]
    } catch {
      return [line]  // a picture we cannot draw (WebP) keeps its text line
    }
  }
}
