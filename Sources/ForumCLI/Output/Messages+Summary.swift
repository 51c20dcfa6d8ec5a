/// Sentences of the start-up summary, `unread --count`, mute and follow.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  /// "3 new threads, 12 new comments in 4 threads you read, 2 messages — unread"; nil when
  /// nothing is new. `more`: counting stopped at a limit.
  func summaryLine(
    threads: Int, comments: Int, inThreads: Int, messages: Int, more: Bool
  ) -> String? {
    guard threads + comments + messages > 0 else { return nil }
    let plus = more ? "+" : ""
    var parts: [String] = []
    if japanese {
      if threads > 0 { parts.append("新しいスレッド \(threads)\(plus) 件") }
      if comments > 0 { parts.append("読んだ \(inThreads)\(plus) スレッドに新しいコメント \(comments)\(plus) 件") }
      if messages > 0 { parts.append("メッセージ \(messages) 件") }
      return parts.joined(separator: "、") + " — 未読"
    }
    if threads > 0 { parts.append("\(threads)\(plus) new thread" + (threads == 1 ? "" : "s")) }
    if comments > 0 {
      parts.append(
        "\(comments)\(plus) new comment" + (comments == 1 ? "" : "s") + " in \(inThreads)\(plus) "
          + (inThreads == 1 ? "thread" : "threads") + " you read")
    }
    if messages > 0 { parts.append("\(messages) message" + (messages == 1 ? "" : "s")) }
    return parts.joined(separator: ", ") + " — unread"
  }

  var unreadCountNeedsNothingElse: String {
    say("unread --count takes no other argument", "unread --count に他の引数は付けられません")
  }

  func muted(_ number: Int, already: Bool) -> String {
    already
      ? say("#\(number) was already muted.", "#\(number) は既にミュートしています。")
      : say(
        "Muted #\(number): it leaves list, unread and notices (unmute \(number) brings it back).",
        "#\(number) をミュートしました: list、unread、通知に出なくなります (unmute \(number) で戻ります)。")
  }

  func unmuted(_ number: Int, was: Bool) -> String {
    was
      ? say("Unmuted #\(number).", "#\(number) のミュートを解除しました。")
      : say("#\(number) was not muted.", "#\(number) はミュートしていません。")
  }

  func followed(_ number: Int, already: Bool) -> String {
    already
      ? say("You already follow #\(number).", "#\(number) は既にフォローしています。")
      : say(
        "Following #\(number): its new comments are told wherever you are.",
        "#\(number) をフォローしました: 新しいコメントはどこにいても通知されます。")
  }

  func unfollowed(_ number: Int, was: Bool) -> String {
    was
      ? say("Stopped following #\(number).", "#\(number) のフォローをやめました。")
      : say("You did not follow #\(number).", "#\(number) はフォローしていません。")
  }

  /// A new comment in a thread you follow, told wherever you are.
  func followNotice(_ who: String, reference: String, title: String, text: String) -> String {
    say(
      "★ \(who) in #\(reference) \"\(title)\": \(text) — show \(reference)",
      "★ \(who) (#\(reference)「\(title)」): \(text) — show \(reference)")
  }

  func moreFollowed(_ count: Int) -> String {
    say("… and \(count) more in threads you follow", "… フォロー中のスレッドにほかに \(count) 件")
  }

  func mutedHidden(_ count: Int) -> String {
    say("(\(count) muted thread" + (count == 1 ? "" : "s") + " hidden)", "(ミュート中 \(count) 件は非表示)")
  }
}
