/// Sentences of a paste into a room.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  func pastedLines(_ count: Int) -> String {
    say("You pasted \(count) lines:", "\(count) 行を貼り付けました:")
  }

  func pasteQuestion(_ count: Int) -> String {
    say(
      "Send them as one message (1), as \(count) messages (\(count)), or cancel (c)? ",
      "1 つのメッセージで送る (1)、\(count) 件で送る (\(count))、取り消す (c)? ")
  }

  var pasteCancelled: String { say("Nothing was sent.", "何も送信しませんでした。") }
}
