import Datastore
import Forum

/// Conversations and the inbox, through `SafeText` like every other database text.
extension BoardRenderer {
  /// "Name @handle": a display name is anyone's to choose, the handle is unique.
  func person(_ user: User) -> String {
    let handle = "@" + SafeText.sanitize(user.userName)
    guard user.displayName != user.userName else { return handle }
    return SafeText.sanitize(user.displayName) + " " + handle
  }

  /// One line a conversation: partner, the start of the last message, age, unread.
  func inbox(_ page: Page<ForumConversation>) -> [String] {
    guard !page.items.isEmpty else { return [messages.emptyInbox] }
    let whoWidth = min(34, page.items.map { SafeText.width(person($0.partner)) }.max() ?? 10)
    let ageWidth = messages.japanese ? 6 : 4
    let unreadWidth = 4
    let textWidth = max(10, width - whoWidth - ageWidth - unreadWidth - 3)
    var lines: [String] = []
    if columnHeaders {
      lines.append(
        inboxHeader(
          whoWidth: whoWidth, textWidth: textWidth, ageWidth: ageWidth, unreadWidth: unreadWidth))
    }
    for conversation in page.items {
      if conversation.isDamaged {
        lines.append(style.dim(messages.damagedRow))
        continue
      }
      let who = SafeText.pad(
        SafeText.truncate(person(conversation.partner), to: whoWidth), to: whoWidth)
      var start = ""
      if let last = conversation.lastMessage, last.isDamaged {
        start = messages.damagedRow
      } else if let last = conversation.lastMessage {
        let flat = SafeText.sanitize(last.text).split(whereSeparator: \.isNewline).joined(
          separator: " ")
        start = (last.isMine ? "\(messages.you): " : "") + flat
      }
      let text = SafeText.pad(SafeText.truncate(start, to: textWidth), to: textWidth)
      let age = SafeText.pad(age(conversation.lastActivity), to: ageWidth, alignRight: true)
      let count = conversation.unread.map { $0 > 0 ? String($0) : "" } ?? ""
      var line = "\(style.author(who)) \(text) \(style.dim(age))"
      if !count.isEmpty {
        line += " " + style.number(SafeText.pad(count, to: unreadWidth, alignRight: true))
      }
      lines.append(line)
    }
    if page.hasMore {
      lines.append(style.dim("\(messages.more): inbox --page \(page.number + 1)"))
    }
    return lines
  }

  /// A conversation's head and one page of its messages.
  func conversation(
    _ conversation: ForumConversation, page: Page<ForumMessage>, last: Int
  ) -> [String] {
    var lines = SafeText.wrap(
      messages.conversationHeading(person(conversation.partner), conversation.messageCount),
      to: width
    ).map { style.bold($0) }
    lines.append(style.dim(String(repeating: "─", count: min(width, 60))))
    lines += messageLines(page.items)
    if last > 1 {
      let handle = "@" + SafeText.sanitize(conversation.partner.userName)
      var footer = "\(messages.page) \(page.number)/\(max(last, page.number))"
      if page.number > 1 { footer += " — dm \(handle) --page \(page.number - 1)" }
      lines.append(style.dim(footer))
    }
    return lines
  }

  /// Each message's number, author and time, then its text, like comments.
  func messageLines(_ items: [ForumMessage]) -> [String] {
    let numberWidth = items.map { String($0.number).count }.max() ?? 1
    let indent = String(repeating: " ", count: numberWidth + 3)
    var lines: [String] = []
    for message in items {
      let number = SafeText.pad(String(message.number), to: numberWidth, alignRight: true)
      if message.isDamaged {
        lines.append("  \(style.number(number)) \(style.dim(messages.damagedRow))")
        continue
      }
      let when =
        "\(LocalTime.string(milliseconds: message.createDate)) · \(age(message.createDate))"
      let you = message.isMine ? " (\(messages.you))" : ""
      let name = SafeText.truncate(SafeText.sanitize(message.authorName), to: 40)
      let who = message.isMine ? style.mine(name + you) : style.author(name)
      lines.append("  \(style.number(number)) \(who) · \(style.dim(when))")
      for line in SafeText.wrap(
        SafeText.sanitize(message.text, keepNewlines: true), to: max(10, width - indent.count))
      {
        lines.append(indent + line)
      }
    }
    return lines
  }
}

extension BoardRenderer {
  /// Display names that two different people use among `authors` (name, user id): anyone may
  /// choose any name, so where one is shared the unique handles tell them apart.
  static func sharedNames(_ authors: [(name: String, id: String)]) -> Set<String> {
    var owners: [String: String] = [:]
    var shared: Set<String> = []
    for (name, id) in authors {
      if let owner = owners[name], owner != id { shared.insert(name) } else { owners[name] = id }
    }
    return shared
  }

  /// An author's name, with `@handle` after it when the name is shared on the page.
  func authorLabel(_ name: String, _ userName: String, shared: Set<String>) -> String {
    let safe = SafeText.sanitize(name)
    guard shared.contains(name), !userName.isEmpty else { return safe }
    return safe + " @" + SafeText.sanitize(userName)
  }
}
