import Forum

extension BoardRenderer {
  /// Search results: a line naming each post (ref, title, author, age), then its snippet with
  /// the match highlighted, all database text sanitized.
  func searchResults(_ page: Page<SearchHit>) -> [String] {
    guard !page.items.isEmpty else { return [messages.noSearchResults] }
    // A message's ref holds the other member's handle, text from the database like any other.
    let refs = page.items.map { SafeText.sanitize($0.ref) }
    // Shown whole: a message's ref cut to `@fv3dwHCsR0…` hid its number.
    let refWidth = min(max(12, width / 3), refs.map { SafeText.width($0) + 1 }.max() ?? 2)
    let indent = String(repeating: " ", count: refWidth + 1)
    let authorWidth = 12
    let ageWidth = messages.japanese ? 6 : 4
    var lines: [String] = []
    if columnHeaders {
      lines.append(
        searchHeader(
          refWidth: refWidth,
          titleWidth: max(10, width - refWidth - 1 - authorWidth - 1 - ageWidth - 1),
          authorWidth: authorWidth, ageWidth: ageWidth))
    }
    for (hit, shownRef) in zip(page.items, refs) {
      let whole = hit.kind == .thread ? "#" + shownRef : shownRef
      let ref = SafeText.width(whole) >= refWidth ? whole : SafeText.pad(whole, to: refWidth)
      let place: String
      switch hit.kind {
      case .thread: place = ""
      case .comment: place = messages.searchIn(hit.threadNumber) + " "
      case .message: place = messages.searchWith + " "
      }
      if hit.isDamaged {
        lines.append("\(style.number(ref)) \(style.dim(messages.damagedRow))")
        continue
      }
      let titleWidth = max(10, width - refWidth - 1 - authorWidth - 1 - ageWidth - 1)
      let title = SafeText.pad(place + SafeText.sanitize(hit.threadTitle), to: titleWidth)
      let authorText = SafeText.pad(SafeText.sanitize(hit.authorName), to: authorWidth)
      let author = hit.isMine ? style.mine(authorText) : style.author(authorText)
      let age = SafeText.pad(age(hit.createDate), to: ageWidth, alignRight: true)
      lines.append(
        "\(style.number(ref)) \(hit.isMine ? style.mine(title) : style.bold(title)) \(author) "
          + style.dim(age))
      lines.append(indent + snippetLine(hit.snippet, room: max(10, width - indent.count)))
    }
    if page.hasMore || page.number > 1 {
      var footer = "\(messages.page) \(page.number)"
      if page.hasMore { footer += " — \(messages.more): --page \(page.number + 1)" }
      lines.append(style.dim(footer))
    }
    return lines
  }

  /// The snippet fitted to `room` cells: some context before, the match (highlighted), then as
  /// much after as fits.
  func snippetLine(_ snippet: SearchSnippet, room: Int) -> String {
    let match = SafeText.truncate(SafeText.sanitize(snippet.match), to: room)
    var left = room - SafeText.width(match)
    var before = SafeText.sanitize(snippet.before)
    let beforeRoom = min(SafeText.width(before), left / 3)
    var cutBefore = snippet.cutBefore
    if SafeText.width(before) > beforeRoom {
      before = SafeText.suffix(before, cells: max(0, beforeRoom - 1))
      cutBefore = true
    }
    let lead = cutBefore && !before.isEmpty ? "…" + before : before
    left -= SafeText.width(lead)
    let afterText =
      SafeText.sanitize(snippet.after) + (snippet.cutAfter && !snippet.after.isEmpty ? "…" : "")
    let after = SafeText.truncate(afterText, to: max(0, left))
    return style.dim(lead) + style.apply("1;4", match) + after
  }
}
