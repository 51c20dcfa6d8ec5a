import Datastore
import Foundation
import Testing

/// Each refusal is a value (a code and its arguments) that `Messages` says in the reader's
/// language: the whole line is Japanese under `ja`, and the English stays what it was.
@Suite("error reasons")
struct ErrorReasonTests {
  static let ja = "ja_JP.UTF-8"

  /// (what the person runs, as whom, the English line, the Japanese line)
  private static let cases:
    [(arguments: [String], profile: String, english: String, japanese: String)] = [
      (["show", "9"], "alice", "there is no thread #9", "スレッド #9 はありません。"),
      (["show", "1/9"], "alice", "there is no comment 1/9", "コメント 1/9 はありません。"),
      (
        ["new", "--title", String(repeating: "長", count: 201)], "alice",
        "The title is 201 characters; the limit is 200", "タイトルが長すぎます (201 文字、上限は 200 文字)。"
      ),
      (
        ["comment", "1", "a\u{07}b"], "alice", "The comment must not contain control characters",
        "コメントに制御文字は使えません。"
      ),
      (
        ["new", "--title", "e" + String(repeating: "\u{301}", count: 9)], "alice",
        "The title has a character with 9 combining marks; at most 8",
        "タイトルに結合文字が多すぎる文字があります (9 個、上限は 8 個)。"
      ),
      (
        ["new", "--title", "😀" + String(repeating: "\u{200D}😀", count: 8)], "alice",
        "The title has a character made of 17 code points; at most 16",
        "タイトルにコードポイントが多すぎる文字があります (17 個、上限は 16 個)。"
      ),
      (["image", "1"], "alice", "thread #1 has no image", "スレッド #1 に画像はありません。"),
      (
        ["dm", "@nobody1234", "hi"], "alice", "there is no user @nobody1234",
        "ユーザー @nobody1234 はいません。"
      ),
      (
        ["search", String(repeating: "k", count: 1001)], "alice", "longer than 1000 characters",
        "検索語が長すぎます (上限は 1000 文字)。"
      ),
      (["edit", "1/2", "back"], "alice", "1/2 was deleted by a moderator", "1/2 はモデレーターが削除しました。"),
      // `mod` said every refusal as "may choose moderators", a member's `mod list` too.
      (
        ["mod", "list"], "alice", "only the board's owner may list moderators",
        "モデレーターの一覧を見られるのは掲示板の所有者だけです"
      ),
    ]

  @Test func refusalsAreSaidInTheReadersLanguage() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")  // the first user owns the board
    try forum.ok(["new", "--title", "first"])
    try forum.ok(["comment", "1", "one"])
    try forum.ok(["comment", "1", "two"])
    let mod = try forum.ok(["--json", "whoami"], profile: "mod").json().string("userName") ?? ""
    try forum.ok(["mod", "add", "@" + mod], profile: "owner")
    try forum.ok(["delete", "1/2", "--yes"], profile: "mod")
    for item in Self.cases {
      let english = try forum.run(item.arguments, profile: item.profile)
      #expect(english.status != 0, "\(item.arguments)")
      #expect(english.stderr == "forum: \(item.english)\n", "\(item.arguments)")
      let japanese = try forum.run(item.arguments, profile: item.profile, lang: Self.ja)
      #expect(japanese.status == english.status, "\(item.arguments)")
      #expect(japanese.stderr == "forum: \(item.japanese)\n", "\(item.arguments)")
    }
  }

  @Test func aDraftOverTheLimitIsSaidInTheReadersLanguage() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "first"])
    let body = Data((String(repeating: "z", count: 50_000) + "\n.\n").utf8)
    let english = try forum.run(["comment", "1"], input: body)
    #expect(english.stderr == "forum: The comment is longer than 10000 characters\n")
    let japanese = try forum.run(["comment", "1"], input: body, lang: Self.ja)
    #expect(japanese.status == 1)
    #expect(japanese.stderr == "forum: コメントが長すぎます (上限は 10000 文字)。\n")
  }

  /// Saving an image over a file, or to a directory, was said in English under `ja`: the
  /// machine's refusals are in the catalogue too.
  @Test func savingAnImageIsRefusedInTheReadersLanguage() throws {
    let forum = try ForumFixture()
    try forum.ok(["new", "--title", "picture", "--image", PathTests.png])
    let here = forum.root + "/saved"
    try FileManager.default.createDirectory(
      atPath: here + "/folder", withIntermediateDirectories: true)
    FileManager.default.createFile(atPath: here + "/taken.png", contents: Data([1]))
    let cases: [(path: String, english: String, japanese: String)] = [
      (
        "taken.png", "taken.png already exists; add --force to replace it",
        "taken.png はすでにあります。置き換えるには --force を付けてください"
      ),
      ("folder", "folder is a directory", "folder はディレクトリです"),
      ("folder/", "folder/ names a directory, not a file", "folder/ はディレクトリを指しています。ファイルを指定してください"),
    ]
    for item in cases {
      let english = try forum.run(["image", "1", "--save", item.path], directory: here)
      #expect(english.status == 1, "\(english.summary)")
      #expect(english.stderr == "forum: \(item.english)\n", "\(english.summary)")
      let japanese = try forum.run(
        ["image", "1", "--save", item.path], lang: Self.ja, directory: here)
      #expect(japanese.status == 1, "\(japanese.summary)")
      #expect(japanese.stderr == "forum: \(item.japanese)\n", "\(japanese.summary)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: here + "/taken.png")) == Data([1]))
  }

  /// Bans and the posting budget are the board's (issue 32): a member's `mod ban-key` and
  /// `mod posts-per-minute`, and a banned member's write, are said from the catalogue in the
  /// reader's language, not reworded by `mod` or `edit`.
  @Test func stewardsRefusalsAreSaidInTheReadersLanguage() throws {
    let forum = try ForumFixture()
    try forum.ok(["list"], profile: "owner")  // the first user owns the board
    try forum.ok(["new", "--title", "first"], profile: "bob")
    let bob = try forum.ok(["--json", "whoami"], profile: "bob").json().string("userName") ?? ""
    let cases: [(arguments: [String], profile: String, english: String, japanese: String)] = [
      (
        ["mod", "ban-key", "@" + bob], "alice",
        "only moderators and the board's owner may ban, and nobody bans the owner",
        "締め出せるのはモデレーターと所有者だけです (所有者は締め出せません)"
      ),
      (
        ["mod", "posts-per-minute", "5"], "alice",
        "only moderators and the board's owner set the posting budget",
        "投稿数の上限を決められるのはモデレーターと所有者だけです"
      ),
    ]
    try forum.ok(["list"], profile: "alice")
    for item in cases {
      let english = try forum.run(item.arguments, profile: item.profile)
      #expect(english.status == 3, "\(english.summary)")
      #expect(english.stderr == "forum: \(item.english)\n", "\(english.summary)")
      let japanese = try forum.run(item.arguments, profile: item.profile, lang: Self.ja)
      #expect(japanese.status == 3, "\(japanese.summary)")
      #expect(japanese.stderr == "forum: \(item.japanese)\n", "\(japanese.summary)")
    }
    try forum.ok(["mod", "ban-key", "@" + bob], profile: "owner")
    let banned = try forum.run(["edit", "1", "--title", "mine"], profile: "bob", lang: Self.ja)
    #expect(banned.status == 3, "\(banned.summary)")
    #expect(
      banned.stderr == "forum: この掲示板から締め出されています。読むことはできますが、書き込めません\n",
      "\(banned.summary)")
  }

  /// PostgreSQL's member storage raise (its schema step fixes the words) is read as its value,
  /// said in Japanese too; other words stay words.
  @Test func aMembersStorageIsTheCataloguesReason() {
    let raised = "your objects would hold 400123 bytes; the storage per user is 300000 bytes"
    let reason = StoreReason.memberStorage(raised: raised)
    #expect(reason == .memberStorageFull(bytes: 400_123, limit: 300_000))
    let error = DatastoreError(.invalid, field: "value", reason: reason.map(Reason.store))
    #expect(error.wording.english == raised)
    #expect(
      error.wording.japanese
        == "あなたのオブジェクトが 400123 バイトになります。1 人あたりの保存容量は 300000 バイトまでです。")
    #expect(StoreReason.memberStorage(raised: raised + "!") == nil)
    #expect(StoreReason.memberStorage(raised: "value too long for type") == nil)
  }
}
