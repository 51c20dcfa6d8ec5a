import Datastore
import Forum

/// `search WORDS`: posts holding every word, best first, 20 a page.
enum SearchCommand: ForumCommand {
  static let name = "search"
  static let aliases = ["find"]
  static let info = CommandInfo(
    name: name, aliases: aliases,
    summary: Localized(
      "posts holding every word, best first",
      "すべての語を含む投稿を関連度順に表示"),
    details: Localized(
      "Looks in titles, descriptions, comments and your direct messages (shown as @bob/3). A word matches anywhere in a "
        + "post, upper and lower case alike; \"two words\" in quotes is one phrase. Japanese "
        + "words of one or two characters (天気) work too. Quotes, *, -, : and NEAR are "
        + "ordinary characters; put -- before a word that starts with -.",
      "読めるタイトル、本文、コメント、自分のダイレクトメッセージ (@bob/3) を探します。語は投稿のどこにあっても一致し、英字の大文字と"
        + "小文字は区別しません。\"二つの 語\" のように引用符で囲むと一つの語句になります。"
        + "天気 のような 1〜2 文字の語も探せます。引用符、*、-、:、NEAR は普通の文字です。"
        + "- で始まる語の前には -- を置いてください。"),
    parameters: [words, author, thread, page], collapsesOptions: true)

  static let words = Argument<String>(
    "WORDS", help: Localized("what every post found holds", "探す語"),
    maximum: TextSearch.maximumTerms)
  static let author = Option<Handle>(
    "author", value: "@handle", help: Localized("only their posts", "その人の投稿だけ"))
  static let thread = Option<ThreadNumber>(
    "thread", value: "N", help: Localized("only that thread", "そのスレッドだけ"))
  static let page = Option<PageRequest>("page", value: "N", help: Localized("which page", "ページ"))

  static func run(_ invocation: Invocation, in session: Session) throws -> Session.Outcome {
    let page = invocation[Self.page]?.number(last: 1) ?? 1
    let query = Session.SearchQuery(
      terms: invocation.all(words), author: invocation[author]?.text,
      thread: invocation[thread]?.number)
    try show(query, page: page, in: session)
    return .next
  }

  /// Page `page` of the search; `next` and `prev` continue it.
  static func show(_ query: Session.SearchQuery, page: Int, in session: Session) throws {
    let results = try session.board.search(
      query.terms, author: query.author, thread: query.thread, page: page)
    if results.items.isEmpty && page > 1 {
      throw CLIError.notFound(session.messages.searchPastTheEnd(page))
    }
    session.navigation.listed(.search(query, page: page))
    if session.json {
      session.emitPage(results.items.map(\.json), page: page, hasMore: results.hasMore)
      return
    }
    session.printLines(session.renderer.searchResults(results))
  }
}
