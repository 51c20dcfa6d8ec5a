/// Sentences of direct messages and the inbox.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  var messagePrompt: String {
    say(
      "Message (end with a line holding a single \".\"):",
      "メッセージ (「.」だけの行で終わります):")
  }
  var emptyInbox: String {
    say(
      "No conversations yet. Start one with: dm @HANDLE TEXT (whoami shows your handle)",
      "会話はまだありません。次のように始められます: dm @ハンドル 本文 (自分のハンドルは whoami で)")
  }
  var messageToYourself: String {
    say(
      "You can't message yourself: a conversation is between two people.",
      "自分自身には送れません。会話は 2 人の間のものです。")
  }
  var whichHandle: String {
    say("whom? e.g. dm @bob TEXT (Tab completes handles)", "誰にですか? 例: dm @bob 本文 (Tab でハンドルを補完)")
  }
  var unread: String { say("unread", "未読") }
  func noMessagesYet(_ handle: String) -> String {
    say(
      "No messages with \(handle) yet. Send one with: dm \(handle) TEXT",
      "\(handle) とのメッセージはまだありません。次のように送れます: dm \(handle) 本文")
  }
  func sent(_ handle: String, _ number: Int) -> String {
    say("Sent to \(handle) (message \(number)).", "\(handle) に送信しました (メッセージ \(number))。")
  }
  func conversationHeading(_ name: String, _ count: Int) -> String {
    say(
      "Conversation with \(name) · \(count) message\(count == 1 ? "" : "s")",
      "\(name) との会話 · \(count) 件")
  }
}
