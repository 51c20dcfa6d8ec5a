import Datastore
import Forum

/// `dm @bob` at the prompt: the conversation with bob as a room, like `chat THREAD`.
extension ChatRoom {
  static func conversation(with partner: User, in session: Session) -> Source {
    let board = session.board
    let handle = "@" + SafeText.sanitize(partner.userName)
    // The conversation may not exist until the first line is sent from the room.
    var conversationId = try? board.conversation(with: partner.userName).objectId
    var shown = 0
    var read: ReadMark?
    func resolve() -> String? {
      if conversationId == nil {
        conversationId = try? board.conversation(with: partner.userName).objectId
      }
      if read == nil, let id = conversationId {
        read = ReadMark(position: (try? board.readPosition(inConversation: id)) ?? 0) {
          try board.markRead(conversation: id, upTo: $0)
        }
      }
      return conversationId
    }
    return Source(
      title: "\(session.renderer.person(partner)) — \(session.messages.directMessagesTitle)",
      prompt: "\(handle) dm> ",
      history: {
        guard let id = resolve() else { return [session.style.dim(session.messages.roomIsQuiet)] }
        let (last, total) = try board.messages(
          inConversation: id, after: 0, limit: historyCount)
        shown = last.last?.number ?? 0
        read?.shown(last.map(\.number), after: 0, complete: total == last.count)
        var lines: [String] = []
        if total > last.count {
          lines.append(
            session.style.dim(session.messages.earlierMessages(total - last.count, handle)))
        }
        return lines + last.flatMap { chatLines($0, session) }
      },
      post: { text in try board.sendMessage(to: partner.userName, text: text) },
      className: Board.messageClassName,
      arrivals: { changes in
        guard let id = resolve(), changes.contains(where: { $0.kind == .created }) else {
          return []
        }
        let (newest, total) = try board.messages(
          inConversation: id, after: shown, limit: burstLimit)
        read?.shown(newest.map(\.number), after: shown, complete: total == newest.count)
        var lines: [String] = []
        if total > newest.count {
          lines.append(
            session.style.dim(
              session.messages.messageGap(total - newest.count, since: shown, handle)))
        }
        shown = newest.last?.number ?? shown
        return lines + newest.flatMap { chatLines($0, session) }
      },
      belongs: { change in change.parentId != nil && change.parentId == resolve() },
      isOpen: { true })
  }

  /// One message as a room line, like a thread room's: `12:04 Ken: text`, yours marked.
  static func chatLines(_ message: ForumMessage, _ session: Session) -> [String] {
    let style = session.style
    let time = clock(message.createDate)
    let you = message.isMine ? " (\(session.messages.you))" : ""
    let name = SafeText.truncate(SafeText.sanitize(message.authorName), to: 24) + you
    let head = "\(time) \(name): "
    let width = max(20, session.terminal.width)
    let indent = String(repeating: " ", count: min(SafeText.width(head), width / 2))
    var wrapped = SafeText.wrap(
      SafeText.sanitize(message.text, keepNewlines: true),
      to: max(10, width - SafeText.width(head)))
    if wrapped.isEmpty { wrapped = [""] }
    let who = message.isMine ? style.mine(name) : style.author(name)
    return ["\(style.dim(time)) \(who): \(wrapped[0])"] + wrapped.dropFirst().map { indent + $0 }
  }
}

/// Messages to you while you are elsewhere at the prompt: one line each.
extension Session {
  /// How many messages are named at once; the rest are counted.
  static let liveMessageLimit = 3

  func messageNotices(_ changes: [Change]) throws -> [String] {
    var ids: [String] = []
    for change in changes where change.kind == .created && !ids.contains(change.objectId) {
      ids.append(change.objectId)
    }
    guard !ids.isEmpty else { return [] }
    let arrived = try board.messages(objectIds: ids).filter { !$0.isMine }
    var lines: [String] = []
    for message in arrived.prefix(Session.liveMessageLimit) {
      let handle = "@" + SafeText.sanitize(message.authorUserName)
      let who = SafeText.truncate(SafeText.sanitize(message.authorName), to: 24) + " " + handle
      let flat = SafeText.sanitize(message.text).split(whereSeparator: \.isNewline).joined(
        separator: " ")
      let room = max(10, terminal.width - SafeText.width(who) - SafeText.width(handle) - 12)
      lines.append(
        style.bold(messages.messageNotice(who, SafeText.truncate(flat, to: room), handle)))
    }
    if arrived.count > Session.liveMessageLimit {
      lines.append(style.bold(messages.moreMessages(arrived.count - Session.liveMessageLimit)))
    }
    return lines
  }
}
