/// Sentences of the live prompt and of chat rooms.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  func newThread(_ number: Int, title: String, author: String) -> String {
    say(
      "New thread #\(number) \"\(title)\" by \(author) — show \(number)",
      "新しいスレッド #\(number)「\(title)」(\(author)) — show \(number)")
  }

  func moreNewThreads(_ count: Int) -> String {
    say("… and \(count) more new threads: list", "… ほかに新しいスレッド \(count) 件: list")
  }

  func threadEdited(_ number: Int, title: String) -> String {
    say("Thread #\(number) was edited: \"\(title)\"", "スレッド #\(number) が編集されました:「\(title)」")
  }

  func commentDeleted(_ label: String) -> String {
    say("Comment \(label) was deleted.", "コメント \(label) は削除されました。")
  }

  func commentEdited(_ label: String) -> String {
    say("Comment \(label) was edited:", "コメント \(label) が編集されました:")
  }

  /// A burst too long to print: how many were left out after which comment, and how to read them.
  func commentGap(_ count: Int, since number: Int, command: String) -> String {
    // Before the first comment there is no "comment 0" to count from.
    if number == 0 {
      return say(
        "… \(count) more before these: \(command)", "… この前にほかに \(count) 件: \(command)")
    }
    return say(
      "… \(count) more since comment \(number): \(command)",
      "… コメント \(number) のあとにほかに \(count) 件: \(command)")
  }

  /// An empty thread at the prompt, where comments may still arrive below.
  var noCommentsYetLive: String {
    say("No comments yet; new ones appear below.", "コメントはまだありません。新しいコメントは下に表示されます。")
  }

  /// The live view fell behind the change feed's window: some changes were not seen.
  var liveMissed: String {
    say(
      "… more happened than the live view keeps; list or show to see the board as it is now",
      "… ライブ表示が保持する以上の変更がありました。list か show で現在の掲示板を表示してください")
  }

  var liveResumed: String {
    say("live updates resumed", "ライブ更新を再開しました")
  }

  func liveFailed(_ detail: String, stopped: Bool) -> String {
    stopped
      ? say(
        "live updates stopped: \(detail)", "ライブ更新を停止しました: \(detail)")
      : say("live updates failed: \(detail)", "ライブ更新に失敗しました: \(detail)")
  }
}

/// Sentences of chat rooms.
extension Messages {
  private func inRoom(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  var chatTitle: String { inRoom("chat", "チャット") }

  var chatHint: String {
    inRoom(
      "Type to talk. /leave or Ctrl-D leaves; /COMMAND runs a command.",
      "入力すると発言します。/leave か Ctrl-D で退出、/コマンド でコマンドを実行します。")
  }

  var roomIsQuiet: String { inRoom("Nobody has said anything yet.", "まだ発言はありません。") }

  func earlierInRoom(_ count: Int, _ thread: Int) -> String {
    inRoom(
      "… \(count) earlier comments: /show \(thread)", "… それ以前のコメント \(count) 件: /show \(thread)")
  }

  var chatNeedsTerminal: String {
    inRoom(
      "chat needs a terminal; in a script, post with: comment THREAD TEXT",
      "chat には端末が必要です。スクリプトでは comment THREAD 本文 で投稿してください")
  }
}
