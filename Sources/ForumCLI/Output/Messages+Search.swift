extension Messages {
  var noSearchResults: String {
    japanese ? "一致する投稿はありません。" : "No posts match."
  }

  func searchPastTheEnd(_ page: Int) -> String {
    japanese
      ? "\(page) ページ目はありません。検索結果はそれより少ないです。"
      : "There is no page \(page): the search has fewer results."
  }

  /// Before a message's other member: "with @bob".
  var searchWith: String { japanese ? "DM" : "with" }

  func searchIn(_ thread: Int) -> String { japanese ? "#\(thread) 内" : "in #\(thread)" }
}
