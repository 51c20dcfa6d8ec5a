import Datastore
import Forum

/// Turns board values into lines for a terminal or a pipe. All database text goes through
/// `SafeText` here, and nowhere else prints it.
struct BoardRenderer {
  let style: Style
  let messages: Messages
  let width: Int
  let now: Int64
  /// At the live prompt an empty thread says that comments will appear below it.
  var commentsMayArrive = false
  /// Display names that more than one person on the screen has: shown with their `@handle`.
  var sharedNames: Set<String> = []
  /// The comment `show 12/14` went to: its line starts with ▶.
  var markedComment: Int?
  /// At a terminal, listings start with their column headers (`BoardRenderer+Headers`).
  var columnHeaders = false

  func age(_ milliseconds: Int64) -> String {
    // A date written by hand may be anything: far enough off, the difference overflows.
    let (difference, overflow) = now.subtractingReportingOverflow(milliseconds)
    return messages.age(
      seconds: overflow ? (milliseconds > now ? 0 : .max / 1000) : max(0, difference / 1000))
  }

  /// The thread list: one line a thread, fitted to the width.
  func threadList(_ page: Page<ForumThread>, pages: Int) -> [String] {
    guard !page.items.isEmpty else { return [messages.emptyBoard] }
    let numberWidth = page.items.map { Self.numberText($0.number).count + 1 }.max() ?? 2
    let shared = BoardRenderer.sharedNames(page.items.map { ($0.authorName, $0.authorId) })
    let labels = page.items.map {
      authorLabel($0.authorName, $0.authorUserName, shared: shared)
    }
    // "23h" in English, "23時間" in Japanese.
    let ageWidth = messages.japanese ? 6 : 4
    // A narrow terminal drops the comment count before anything else overflows it.
    let showCount = width >= 60
    let fixed = numberWidth + 4 + 1 + 1 + 4 + (showCount ? 5 : 0) + 1 + ageWidth
    // The author column grows to hold a whole `Name @handle` where there is room.
    let authorRoom = max(6, min(24, (width - fixed) * 2 / 5))
    let authorWidth = min(authorRoom, max(12, labels.map(SafeText.width).max() ?? 0))
    let rightWidth = 1 + authorWidth + 1 + 4 + (showCount ? 5 : 0) + 1 + ageWidth
    let middleWidth = max(6, width - numberWidth - 4 - rightWidth)
    var lines: [String] = []
    if columnHeaders {
      lines += listHeader(
        numberWidth: numberWidth, middleWidth: middleWidth, authorWidth: authorWidth,
        showCount: showCount, ageWidth: ageWidth)
    }
    for (thread, label) in zip(page.items, labels) {
      let number = SafeText.pad(
        "#" + Self.numberText(thread.number), to: numberWidth, alignRight: true)
      if thread.isDamaged {
        lines.append("\(style.number(number))    \(style.dim(messages.damagedRow))")
        continue
      }
      let marks = (thread.isMine ? "●" : " ") + (thread.image != nil ? "▣" : " ")
      let shownTitle =
        thread.moderatedDate != nil
        ? "(\(messages.deletedByModerator))" : SafeText.sanitize(thread.title)
      // A flagged thread (a pinned one is listed first) says so before its title.
      let flags = FlagCommand.all.filter { thread.isFlagged($0.flag) }.map { $0.mark + " " }
      let title = SafeText.truncate(flags.joined() + shownTitle, to: middleWidth)
      let room = middleWidth - SafeText.width(title)
      let summary = SafeText.sanitize(thread.description, stoppingPast: room)
      var middle = thread.isMine ? style.mine(title) : style.bold(title)
      if room > 4, !summary.isEmpty {
        let text = SafeText.truncate(" — " + summary, to: room)
        middle += style.dim(text)
        middle += String(repeating: " ", count: room - SafeText.width(text))
      } else {
        middle += String(repeating: " ", count: room)
      }
      let authorText = SafeText.pad(SafeText.truncate(label, to: authorWidth), to: authorWidth)
      let author = thread.isMine ? style.mine(authorText) : style.author(authorText)
      // "+3": posts you have not read (your own never count).
      let unreadText = SafeText.pad(
        thread.unread > 0 ? "+\(min(thread.unread, 999))" : "", to: 4, alignRight: true)
      let unread = thread.unread > 0 ? style.bold(unreadText) : unreadText
      let count =
        showCount ? SafeText.pad(String(thread.commentCount), to: 4, alignRight: true) + " " : ""
      let age = SafeText.pad(age(thread.lastActivity), to: ageWidth, alignRight: true)
      lines.append(
        "\(style.number(number)) \(marks) \(middle) \(author) \(unread) \(count)"
          + style.dim(age))
    }
    if pages > 1 {
      var footer = "\(messages.page) \(page.number)/\(max(pages, page.number))"
      if page.hasMore { footer += " — \(messages.more): list --page \(page.number + 1)" }
      lines.append(style.dim(footer))
    }
    return lines
  }

  /// The thread's head: title, author, dates, then the description.
  func threadHeader(_ thread: ForumThread, image: [String]) -> [String] {
    var lines: [String] = []
    if thread.isDamaged {
      return ["#\(Self.numberText(thread.number)) \(messages.damagedRow)"]
    }
    if let taken = thread.moderatedDate {
      lines.append(style.bold("#\(thread.number) (\(tombstone(taken)))"))
      return lines
    }
    let title = SafeText.sanitize(thread.title)
    for (index, line) in SafeText.wrap("#\(thread.number) " + title, to: width).enumerated() {
      lines.append(index == 0 && thread.isMine ? style.mine(line) : style.bold(line))
    }
    for flag in FlagCommand.all where thread.isFlagged(flag.flag) {
      if let shown = flag.shown?(thread.number) {
        lines.append(style.dim(flag.mark + " " + shown.text(japanese: messages.japanese)))
      }
    }
    // "by NAME (you) · posted … · active … · N comments", on two lines when one would not fit.
    let by = "\(messages.by) "
    let you = thread.isMine ? " (\(messages.you))" : ""
    let author = SafeText.truncate(
      authorLabel(thread.authorName, thread.authorUserName, shared: sharedNames),
      to: max(1, min(52, width - SafeText.width(by) - SafeText.width(you))))
    let who = thread.isMine ? style.mine(author + you) : style.author(author)
    let posted = LocalTime.string(milliseconds: thread.createDate)
    let edited = thread.editDate.map {
      " (\(messages.edited) \(LocalTime.string(milliseconds: $0)))"
    }
    // "by NAME · posted … · active … · N comments": as many parts a line as fit, never cut.
    let parts = [
      (by + author + you, by + who),
      (
        "\(messages.posted) \(posted)\(edited ?? "")", "\(messages.posted) \(posted)\(edited ?? "")"
      ),
      (
        "\(messages.updated) \(age(thread.lastActivity))",
        "\(messages.updated) \(age(thread.lastActivity))"
      ),
      (messages.commentCount(thread.commentCount), messages.commentCount(thread.commentCount)),
    ]
    var line = ""
    var used = 0
    for (plain, styled) in parts {
      let cells = SafeText.width(plain)
      if used > 0 && used + 3 + cells <= width {
        line += " · " + styled
        used += 3 + cells
        continue
      }
      if used > 0 { lines.append(line) }
      if cells <= width {
        (line, used) = (styled, cells)
      } else {
        let pieces = SafeText.wrap(plain, to: width)
        lines += pieces.dropLast()
        line = pieces.last ?? ""
        used = SafeText.width(line)
      }
    }
    if used > 0 { lines.append(line) }
    lines += image
    if !thread.description.isEmpty {
      lines.append("")
      lines += SafeText.wrap(SafeText.sanitize(thread.description, keepNewlines: true), to: width)
    }
    return lines
  }

  /// Comments under a thread, each with its number, author and time; `last` is the thread's
  /// last page (`Board.commentTotal(of:)`'s, not a count written by hand).
  func comments(_ page: Page<ForumComment>, of thread: ForumThread, lastPage last: Int) -> [String]
  {
    var lines = [style.dim(String(repeating: "─", count: min(width, 60)))]
    guard !page.items.isEmpty else {
      lines.append(
        page.number == 1
          ? (commentsMayArrive ? messages.noCommentsYetLive : messages.noComments)
          : messages.pastTheEnd(page.number, "show \(thread.number) --page \(last)"))
      return lines
    }
    lines += commentLines(page.items)
    var footer = "\(messages.page) \(page.number)/\(max(last, page.number))"
    if page.hasMore {
      footer += " — \(messages.more): show \(thread.number) --page \(page.number + 1)"
    }
    lines.append(style.dim(footer))
    return lines
  }

  /// Each comment's number, author and age, then its text wrapped under it.
  func commentLines(_ comments: [ForumComment]) -> [String] {
    let numberWidth = comments.map { String($0.number).count }.max() ?? 1
    let indent = String(repeating: " ", count: numberWidth + 3)
    var lines: [String] = []
    let shared = sharedNames.union(
      BoardRenderer.sharedNames(comments.map { ($0.authorName, $0.authorId) }))
    for comment in comments {
      let number = SafeText.pad(String(comment.number), to: numberWidth, alignRight: true)
      let lead = comment.number == markedComment ? style.bold("▶") + " " : "  "
      if comment.isDamaged {
        lines.append("\(lead)\(style.number(number)) \(style.dim(messages.damagedRow))")
        continue
      }
      let when =
        "\(LocalTime.string(milliseconds: comment.createDate)) · \(age(comment.createDate))"
      let you = comment.isMine ? " (\(messages.you))" : ""
      let editedText = comment.editDate != nil ? " (\(messages.edited))" : ""
      let room =
        width - 2 - numberWidth - 1 - SafeText.width(you) - 3 - SafeText.width(when)
        - SafeText.width(editedText)
      let label = authorLabel(comment.authorName, comment.authorUserName, shared: shared)
      let edited = editedText.isEmpty ? "" : " " + style.dim(String(editedText.dropFirst()))
      if room < min(12, SafeText.width(label)) {
        // Too narrow for the name and the time on one line: the time goes under the name.
        let name = SafeText.truncate(
          label, to: max(4, width - 2 - numberWidth - 1 - SafeText.width(you)))
        let who = comment.isMine ? style.mine(name + you) : style.author(name)
        lines.append("\(lead)\(style.number(number)) \(who)")
        let under = SafeText.truncate(when + editedText, to: max(4, width - indent.count))
        lines.append(indent + style.dim(under))
      } else {
        let name = SafeText.truncate(label, to: max(4, min(52, room)))
        let who = comment.isMine ? style.mine(name + you) : style.author(name)
        lines.append("\(lead)\(style.number(number)) \(who) · \(style.dim(when))\(edited)")
      }
      if let replyTo = comment.replyTo {
        lines.append(
          indent + style.dim(quoteLine(replyTo, comment.quote, width: width - indent.count)))
      }
      if let taken = comment.moderatedDate {
        lines.append(indent + style.dim("(\(tombstone(taken)))"))
        continue
      }
      let text = SafeText.sanitize(comment.text, keepNewlines: true)
      for line in SafeText.wrap(text, to: max(10, width - indent.count)) {
        lines.append(indent + line)
      }
    }
    return lines
  }

  /// A post's number, or `?` for a damaged row whose number could not be read.
  static func numberText(_ number: Int) -> String { number > 0 ? String(number) : "?" }

  /// "deleted by a moderator 2026-11-30 05:40".
  func tombstone(_ date: Int64) -> String {
    "\(messages.deletedByModerator) \(LocalTime.string(milliseconds: date))"
  }

  /// A reply's one-line quote: `> 3 Alice: the start of what Alice wrote…`.
  func quoteLine(_ number: Int, _ quote: Quote?, width: Int) -> String {
    guard let quote else { return "> \(number) \(messages.quoteGone)" }
    if quote.damaged { return "> \(number) \(messages.damagedRow)" }
    let head = "> \(number) \(SafeText.truncate(SafeText.sanitize(quote.authorName), to: 20)): "
    let body =
      quote.moderated
      ? "(\(messages.deletedByModerator))"
      : SafeText.sanitize(quote.text.split(separator: "\n").first.map(String.init) ?? "")
    return SafeText.truncate(head + body, to: max(10, width))
  }

  /// The one-line description of an image: `[image: thread3.png 640×480 PNG 84 KB]`.
  func imageLine(_ image: ImageSummary) -> String {
    var text = ImagePreview.textLine(
      name: image.fileName, format: image.format, width: image.width, height: image.height,
      byteCount: image.byteCount)
    if !image.removedMetadata.isEmpty {
      // The names are the stored row's: text from the database like the file name.
      let names = image.removedMetadata.map { SafeText.sanitize($0) }.joined(separator: ", ")
      text += " (\(names) \(messages.metadataRemoved))"
    }
    return text
  }
}
