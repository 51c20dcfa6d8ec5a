import Datastore
import Forum

/// `who`: the board's people, so a newcomer can learn their handles.
enum WhoCommand: ForumCommand {
  static let name = "who"
  static let aliases = ["members"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "the board's people: name, @handle, when last active, moderators",
      "掲示板の人: 名前、@ハンドル、最後の活動、モデレーター"),
    details: Localized(
      "Most recently active first. Last active is their newest public thread or comment, or "
        + "when they joined (messages and sessions are private). Moderators are marked for the "
        + "board's owner, and for yourself. Handles are understood in any case (`dm @ken1234567`), "
        + "and `@Name` stands for the one person called Name when the name is unique.",
      "最近活動した順です。最後の活動は公開のスレッドかコメントの最新のもの、なければ参加した時"
        + "です (メッセージとセッションは非公開)。モデレーターの印は掲示板の所有者と本人にだけ"
        + "表示されます。ハンドルは大文字小文字を区別せず (`dm @ken1234567`)、表示名が一意なら "
        + "`@名前` でもその人を指します。"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let members = try session.board.members()
    // A listing holds 1,000 people at most: say so when the board has more.
    let count = members.count >= 1000 ? try session.board.memberCount() : members.count
    if session.json {
      session.emit(
        .object([
          "count": .int(Int64(count)),
          "results": .array(
            members.map { member in
              guard case .object(var fields) = member.user.json else { return member.user.json }
              fields["lastActive"] = Board.dateJSON(member.lastActive)
              if let moderator = member.isModerator { fields["moderator"] = .bool(moderator) }
              return .object(fields)
            }),
        ]))
      return .next
    }
    let messages = session.messages
    let renderer = session.renderer
    let names = members.map { member in
      SafeText.sanitize(member.user.displayName) + (member.isYou ? " " + messages.youMark : "")
    }
    let nameWidth = min(max(names.map(SafeText.width).max() ?? 0, 4), 40)
    var lines: [String] = []
    if session.terminal.stdoutIsTerminal {
      lines.append(
        session.style.dim(
          SafeText.pad(messages.whoNameHeader, to: nameWidth) + "  "
            + SafeText.pad(messages.whoHandleHeader, to: 11) + "  " + messages.whoActiveHeader))
    }
    for (member, name) in zip(members, names) {
      var line =
        SafeText.pad(SafeText.truncate(name, to: nameWidth), to: nameWidth) + "  "
        + SafeText.pad("@" + SafeText.sanitize(member.user.userName), to: 11) + "  "
        + SafeText.pad(renderer.age(member.lastActive), to: 6)
      if member.isModerator == true { line += "  " + messages.moderatorMark }
      lines.append(member.isYou ? session.style.mine(line) : line)
    }
    if count > members.count {
      lines.append(session.style.dim(messages.whoShowsSome(members.count, of: count)))
    }
    session.printLines(lines)
    return .next
  }
}
