/// Column headers of `list`, `inbox` and `search` at a terminal (never in a pipe: a program
/// reading the rows should not have to skip a line).
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  var threadColumn: String { say("thread — description", "スレッド — 本文") }
  var authorColumn: String { say("author", "投稿者") }
  /// Above `+3`: the posts you have not read.
  var unreadColumn: String { say("+new", "未読") }
  var commentsColumn: String { say("cmts", "件数") }
  var ageColumn: String { say("age", "経過") }
  var partnerColumn: String { say("with", "相手") }
  var lastMessageColumn: String { say("last message", "最後のメッセージ") }
  var unreadMessagesColumn: String { say("new", "未読") }
  var refColumn: String { say("ref", "参照") }
  var foundInColumn: String { say("where (match below)", "場所 (一致は下の行)") }
  /// The legend under the list's header: what `+N` and the marks mean.
  var listLegend: String {
    say(
      "+N: posts you have not read (yours never count) · ● yours · ▣ image",
      "+N: 未読の投稿数 (自分の投稿は数えません) · ● 自分 · ▣ 画像")
  }
}
