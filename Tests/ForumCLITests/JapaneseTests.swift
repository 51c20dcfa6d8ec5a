import Foundation
import Testing

@testable import Datastore

/// Japanese messages, and Japanese text measured in terminal cells.
@Suite("Japanese")
struct JapaneseTests {
  static let ja = "ja_JP.UTF-8"

  @Test func messagesFollowLANG() throws {
    let forum = try ForumFixture()
    let empty = try forum.run(["list"], lang: Self.ja)
    #expect(empty.status == 0)
    #expect(empty.stdout.hasPrefix("掲示板はまだ空です。"))

    let posted = try forum.run(["new", "--title", "こんにちは"], lang: Self.ja)
    #expect(posted.stdout == "#1 を投稿しました。\n")

    let refused = try forum.run(["delete", "1", "--yes"], profile: "bob", lang: Self.ja)
    #expect(refused.status == 3)
    #expect(refused.stderr.hasPrefix("forum: #1 を削除できるのは投稿者の "))
    #expect(refused.stderr.hasSuffix(" とモデレーターだけです\n"))
    #expect(try forum.storedThreads().count == 1)

    let script = try forum.script(["show 9", "delete 1"], lang: Self.ja)
    #expect(script.status == 4)
    #expect(script.stderrLines.first?.hasPrefix("forum: 1 行目: ") == true)
    #expect(
      script.stderrLines.last == "forum: 2 行目: delete は確認が必要です。スクリプトからは --yes を付けてください")

    // Refusals of input are Japanese sentences too; the English detail stays in parentheses.
    let blank = try forum.run(["new", "--title", "  "], lang: Self.ja)
    #expect(blank.stderr == "forum: タイトルが空です。\n")
    let missing = try forum.run(["show", "9"], lang: Self.ja)
    #expect(missing.status == 4)
    #expect(missing.stderr == "forum: スレッド #9 はありません。\n")
    let long = try forum.run(["new", "--title", String(repeating: "長", count: 201)], lang: Self.ja)
    #expect(long.stderr == "forum: タイトルが長すぎます (201 文字、上限は 200 文字)。\n")
    let bell = try forum.run(["comment", "1", "a\u{07}b"], lang: Self.ja)
    #expect(bell.stderr == "forum: コメントに制御文字は使えません。\n")
    let longName = try forum.run(["name", String(repeating: "名", count: 41)], lang: Self.ja)
    #expect(longName.stderr.hasPrefix("forum: 表示名"))
    #expect(!longName.stderr.contains("displayName"))

    let usage = try forum.script(["comment", ".", "show \"x", "show abc"], lang: Self.ja)
    #expect(
      usage.stderrLines == [
        "forum: 1 行目: どのスレッドですか? 例: comment 12 TEXT", "forum: 3 行目: 引用符が閉じていません",
        "forum: 4 行目: スレッド番号は 12 のような数で指定してください ('abc' ではなく)",
      ])

    let unknown = try forum.run(["lsit"], lang: Self.ja)
    #expect(unknown.status == 2)
    #expect(unknown.stderr == "forum: 不明なコマンド 'lsit'。 もしかして 'list'? 一覧は 'help' で。\n")

    // LC_ALL wins over LANG.
    let english = try forum.run(
      ["delete", "1", "--yes"], profile: "bob", lang: Self.ja, environment: ["LC_ALL": "C"])
    #expect(english.stderr.hasSuffix(" (the author) and moderators may delete #1\n"))

    let shown = try forum.run(["show", "1"], lang: Self.ja)
    #expect(shown.stdout.contains("コメントはまだありません。"))
    #expect(shown.stdout.contains("(あなた)"))
  }

  /// Every list line takes exactly the terminal's width, whatever mix of scripts the titles use.
  @Test(arguments: [80, 60, 120])
  func listLinesLineUpInCells(columns: Int) throws {
    let forum = try ForumFixture()
    let titles = [
      ("ASCII title", "plain description"),
      ("日本語のタイトル", "本文も日本語です"),
      ("混在 mixed タイトル", "mixed 本文 text"),
      (String(repeating: "長い", count: 40), String(repeating: "説明", count: 60)),
      ("a" + String(repeating: "字", count: 60), ""),  // the cut falls inside a wide character
      ("ｶﾀｶﾅ half-width", "ｾﾂﾒｲ"),
      ("e\u{301}te\u{301} combining", "cafe\u{301}"),
      ("寿司🍣と絵文字", ""),
      ("x", ""),
    ]
    var script = titles.map { "new --title '\($0.0)' --description '\($0.1)'" }
    script.append("name 山田太郎")
    let posted = try forum.script(script)
    #expect(posted.status == 0, "\(posted.summary)")
    try forum.ok(["name", "ボブ"], profile: "bob")
    try forum.ok(["new", "--title", "ボブのスレッド"], profile: "bob")

    for lang in ["C", Self.ja] {
      let result = try forum.run(["list"], lang: lang, environment: ["COLUMNS": String(columns)])
      #expect(result.status == 0)
      let lines = result.stdoutLines
      #expect(lines.count == titles.count + 1)
      for line in lines {
        #expect(
          displayWidth(line) == columns, "\(lang) \(columns): \(displayWidth(line)) «\(line)»")
      }
      #expect(lines.contains { $0.contains("山田太郎") })
      if columns >= 80 { #expect(lines.contains { $0.contains("日本語のタイトル — 本文も日本語です") }) }
    }
  }

  /// Ages in Japanese ("5時間", "200日") are wider than English ones and are not cut.
  @Test func japaneseAgesFitTheirColumn() throws {
    let forum = try ForumFixture()
    try forum.script(["new --title 古い", "new --title 昨日", "new --title 新しい"])
    let store = try forum.openStore()
    let threads = try forum.storedThreads()
    let now = BackendDate.now()
    let ages: [Int64] = [200 * 86_400_000, 23 * 3_600_000, 0]
    for (thread, age) in zip(threads, ages) where age > 0 {
      try store.master.update(
        "Thread", objectId: thread.objectId, set: ["lastActivity": .int(now - age - 60_000)])
    }
    let japanese = try forum.run(["list"], lang: Self.ja, environment: ["COLUMNS": "80"])
    let lines = japanese.stdoutLines
    #expect(lines.count == 3)
    #expect(lines[0].hasSuffix("今"))
    #expect(lines[1].hasSuffix("23時間"))
    #expect(lines[2].hasSuffix("200日"))
    #expect(lines.allSatisfy { displayWidth($0) == 80 }, "\(lines)")

    let english = try forum.run(["list"], environment: ["COLUMNS": "80"]).stdoutLines
    #expect(english[1].hasSuffix(" 23h"))
    #expect(english[2].hasSuffix("200d"))
    #expect(english.allSatisfy { displayWidth($0) == 80 }, "\(english)")
  }

  /// `show` wraps Japanese text by cells and never writes a line wider than the terminal.
  @Test(arguments: ["C", "ja_JP.UTF-8"])
  func showFitsTheWidth(lang: String) throws {
    let forum = try ForumFixture()
    let longName = String(repeating: "名", count: 40)
    let description = String(repeating: "とても長い本文です。", count: 30)
    try forum.script([
      "name \(longName)",
      "new --title '\(String(repeating: "題名", count: 60))' --description '\(description)'",
      "comment 1 \(String(repeating: "コメント", count: 50))",
    ])
    for columns in [60, 80] {
      let result = try forum.run(
        ["show", "1"], lang: lang, environment: ["COLUMNS": String(columns)])
      #expect(result.status == 0)
      for line in result.stdoutLines {
        #expect(displayWidth(line) <= columns, "\(columns): \(displayWidth(line)) «\(line)»")
      }
      let body = result.stdoutLines.filter { $0.hasPrefix("とても") || $0.hasPrefix("長い") }
      #expect(body.count > 1, "the description wraps")
      #expect(result.stdout.contains("名名名"))
    }
  }
}
