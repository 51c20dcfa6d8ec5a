/// Sentences of unread tracking, editing, replies and moderation.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  var nothingUnread: String { say("Nothing unread.", "未読はありません。") }
  var noUnreadThreads: String {
    say("No thread has unread posts.", "未読のあるスレッドはありません。")
  }
  var allMarkedRead: String { say("Marked everything read.", "すべて既読にしました。") }
  func markedRead(_ what: String) -> String {
    say("Marked \(what) read.", "\(what) を既読にしました。")
  }
  var readNeedsWhat: String {
    say("say what to mark read: read --all, or read 12", "既読にする対象を指定してください: read --all または read 12")
  }
  func unreadCount(_ count: Int) -> String { say("\(count) unread", "未読 \(count)") }
  var edited: String { say("edited", "編集済み") }
  func editedPost(_ what: String) -> String { say("Edited \(what).", "\(what) を編集しました。") }
  var unchanged: String { say("Nothing changed.", "変更はありません。") }
  var editThreadNeedsFields: String {
    say(
      "edit a thread with --title TEXT and/or --description TEXT",
      "スレッドの編集には --title 本文 か --description 本文 を付けてください")
  }
  var editPrompt: String {
    say("New text (end with a line holding a single \".\"):", "新しい本文 (「.」だけの行で終わります):")
  }
  var multilineNeedsEditor: String {
    say(
      "this text has several lines: set VISUAL or EDITOR to edit it, or give the new text: edit REF TEXT",
      "複数行の本文です。VISUAL か EDITOR を設定するか、新しい本文を指定してください: edit 参照 本文")
  }
  var deletedByModerator: String { say("deleted by a moderator", "モデレーターが削除") }
  func takenDown(_ what: String) -> String {
    say(
      "Deleted \(what) as a moderator; a tombstone stays.", "モデレーターとして \(what) を削除しました (墓標が残ります)。")
  }
  /// The revisions dropped between the first and the latest kept (`Revision.kept`).
  func revisionsNotKept(_ first: Int, _ last: Int) -> String {
    let range = first == last ? "\(first)" : "\(first)–\(last)"
    return say("(revisions \(range) not kept)", "(版 \(range) は残っていません)")
  }

  func revision(_ number: Int, current: Bool) -> String {
    current
      ? say("revision \(number) (current)", "版 \(number) (現在)")
      : say("revision \(number)", "版 \(number)")
  }
  var replyNeedsComment: String {
    say("reply to a comment: reply 12/3 TEXT", "コメントに返信するには: reply 12/3 本文")
  }
  var quoteGone: String { say("(comment gone)", "(コメントは削除されました)") }
  /// A row the board cannot read (written by hand): shown in one line with its number.
  var damagedRow: String { say("(damaged: cannot be read)", "(破損: 読み取れません)") }
  func moderatorAdded(_ handle: String) -> String {
    say("@\(handle) is now a moderator.", "@\(handle) をモデレーターにしました。")
  }
  func moderatorRemoved(_ handle: String) -> String {
    say("@\(handle) is no longer a moderator.", "@\(handle) はモデレーターではなくなりました。")
  }
  var noModerators: String { say("No moderators.", "モデレーターはいません。") }
  /// `whoami`'s labels: user id, profile, database.
  var whoamiLabels: [String] {
    japanese ? ["ユーザー ID", "プロファイル", "データベース"] : ["user id", "profile", "database"]
  }
  var moderatorListOwnerOnly: String {
    say(
      "You are a moderator; only the board's owner sees every moderator.",
      "あなたはモデレーターです。すべてのモデレーターを見られるのは掲示板の所有者だけです。")
  }
  var modUsage: String {
    say(
      "usage: mod add @handle | mod remove @handle | mod list | mod ban-key SHA256:…|@handle "
        + "| mod unban-key SHA256:…|@handle | mod posts-per-minute [N|off] | mod limits "
        + "| mod storage-per-member [MIB|off]",
      "使い方: mod add @ハンドル | mod remove @ハンドル | mod list | mod ban-key SHA256:…|@ハンドル "
        + "| mod unban-key SHA256:…|@ハンドル | mod posts-per-minute [N|off] | mod limits "
        + "| mod storage-per-member [MIB|off]")
  }
}
