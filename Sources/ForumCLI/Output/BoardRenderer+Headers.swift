/// The header lines of the listings, laid out with the same widths as their rows.
extension BoardRenderer {
  func listHeader(
    numberWidth: Int, middleWidth: Int, authorWidth: Int, showCount: Bool, ageWidth: Int
  ) -> [String] {
    let header =
      SafeText.pad("#", to: numberWidth, alignRight: true) + "    "
      + SafeText.pad(SafeText.truncate(messages.threadColumn, to: middleWidth), to: middleWidth)
      + " "
      + SafeText.pad(SafeText.truncate(messages.authorColumn, to: authorWidth), to: authorWidth)
      + " " + SafeText.pad(messages.unreadColumn, to: 4, alignRight: true) + " "
      + (showCount ? SafeText.pad(messages.commentsColumn, to: 4, alignRight: true) + " " : "")
      + SafeText.pad(messages.ageColumn, to: ageWidth, alignRight: true)
    return [
      style.dim(header),
      style.dim(SafeText.truncate(messages.listLegend, to: max(10, width))),
    ]
  }

  func inboxHeader(whoWidth: Int, textWidth: Int, ageWidth: Int, unreadWidth: Int) -> String {
    style.dim(
      SafeText.pad(SafeText.truncate(messages.partnerColumn, to: whoWidth), to: whoWidth) + " "
        + SafeText.pad(SafeText.truncate(messages.lastMessageColumn, to: textWidth), to: textWidth)
        + " " + SafeText.pad(messages.ageColumn, to: ageWidth, alignRight: true) + " "
        + SafeText.pad(messages.unreadMessagesColumn, to: unreadWidth, alignRight: true))
  }

  func searchHeader(refWidth: Int, titleWidth: Int, authorWidth: Int, ageWidth: Int) -> String {
    style.dim(
      SafeText.pad(messages.refColumn, to: refWidth) + " "
        + SafeText.pad(SafeText.truncate(messages.foundInColumn, to: titleWidth), to: titleWidth)
        + " "
        + SafeText.pad(SafeText.truncate(messages.authorColumn, to: authorWidth), to: authorWidth)
        + " " + SafeText.pad(messages.ageColumn, to: ageWidth, alignRight: true))
  }
}
