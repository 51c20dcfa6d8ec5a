import Datastore
import Forum

/// The CLI's own reasons for refusing input (`DatastoreError.reason`).
enum InputReason: ErrorReason, Equatable {
  /// The process's argument `index` (from 1) is not UTF-8.
  case argumentNotUTF8(Int)
  /// An answer to a question is longer than a line may be.
  case answerTooLong
  /// A draft typed or piped is longer than a post may be.
  case draftTooLong(limit: Int)
  /// A script's line over the longest line read; the line is skipped.
  case scriptLineTooLong(megabytes: Int)

  var description: String {
    switch self {
    case .argumentNotUTF8(let index): return "argument \(index) is not valid UTF-8"
    case .answerTooLong: return "line is too long"
    case .draftTooLong(let limit): return "text is longer than \(limit) characters"
    case .scriptLineTooLong(let megabytes):
      return "the line is longer than \(megabytes) MB; it was skipped"
    }
  }
}

/// A failure's sentence, from its code and its reason's value: nothing is read back out of words.
extension Messages {
  /// `E400002`, `E404001` and `E500001`: the reason said in the reader's language; a reason
  /// known only as English words is kept, in parentheses after a Japanese head.
  func failure(_ error: DatastoreError) -> String {
    switch error.reason {
    case let reason as BoardReason: return board(reason)
    case let reason as StoreReason: return store(reason, field: error.field)
    case let reason as InputReason: return input(reason)
    case let reason as BoardAccessReason: return access(reason)
    default:
      // A refusal of who the caller is or may be carries no words of ours (PostgreSQL's
      // `FA401`/`FA403` are read by their state alone): say it as every command does.
      if error.code == .authentication { return sessionRefused }
      if error.code == .noAccess && error.detail == nil { return permissionRefused }
      guard japanese else { return error.detail ?? error.message }
      let head: String
      switch error.code {
      case .notFound: head = "見つかりません。"
      case .noAccess: head = "権限がないようです。"
      case .invalid: head = "\(fieldName(error.field ?? "value"))が正しくありません。"
      default: head = "システムエラーです。"
      }
      return head + (error.detail.map { " (\($0))" } ?? "")
    }
  }

  /// `E413001`: a file over the board's limit.
  func fileTooLarge(_ error: DatastoreError) -> String {
    if case .fileTooLarge(let bytes, let limit)? = error.reason as? StoreReason {
      return pick(
        "image is too large: \(bytes) bytes, the limit is \(limit)",
        "画像が大きすぎます (\(bytes) バイト、上限は \(limit) バイト)。")
    }
    return pick("image is too large", "画像が大きすぎます") + (error.detail.map { ": \($0)" } ?? "")
  }

  /// A field's person name at the start of an English sentence ("The title is …"), its
  /// Japanese name in Japanese.
  private func named(_ field: String) -> String { japanese ? fieldName(field) : personName(field) }

  private func board(_ reason: BoardReason) -> String {
    switch reason {
    case .noThread(let number):
      return pick(reason.description, "スレッド #\(number) はありません。")
    case .noComment(let thread, let comment):
      return pick(reason.description, "コメント \(thread)/\(comment) はありません。")
    case .takenDown(let label): return pick(reason.description, "\(label) はモデレーターが削除しました。")
    case .noUser(let handle): return pick(reason.description, "ユーザー @\(handle) はいません。")
    case .noSuchUser: return pick(reason.description, "そのユーザーはいません。")
    case .severalNamed(let name, let handles, let count):
      return pick(
        "\(count) people are called \(SafeText.sanitize(name)); say which by handle: "
          + BoardReason.handleList(handles, count: count),
        "\(SafeText.sanitize(name)) という名前の人が \(count) 人います。ハンドルで指定してください: "
          + BoardReason.handleList(handles, count: count))
    case .noConversation(let handle):
      return pick(reason.description, "@\(handle) との会話はまだありません。")
    case .noImage(let thread): return pick(reason.description, "スレッド #\(thread) に画像はありません。")
    case .conversationNeedsSomeoneElse: return pick(reason.description, "会話には相手が必要です。")
    case .startsAtOne(let what):
      let name = ["thread": "スレッド番号", "comment": "コメント番号", "pages": "ページ"][what.rawValue]!
      return pick(reason.description, "\(name)は 1 から始まります。")
    case .tooLong(let field, let characters, let limit):
      return pick(
        "\(named(field)) is \(characters) characters; the limit is \(limit)",
        "\(named(field))が長すぎます (\(characters) 文字、上限は \(limit) 文字)。")
    case .tooManyBytes(let field, let bytes, let limit):
      return pick(
        "\(named(field)) is \(bytes) bytes of UTF-8; the limit is \(limit)",
        "\(named(field))が長すぎます (UTF-8 で \(bytes) バイト、上限は \(limit) バイト)。")
    case .tooCostlyToRead(let cost, let limit):
      return pick(
        reason.description,
        "オブジェクトが大きすぎます (読み込みに \(cost) バイト相当、上限は \(limit))。")
    case .containsControlCharacters(let field):
      return pick(
        "\(named(field)) must not contain control characters", "\(named(field))に制御文字は使えません。")
    case .containsLineBreak(let field):
      return pick("\(named(field)) must not contain a line break", "\(named(field))に改行は使えません。")
    case .tooManyMarks(let field, let marks, let limit):
      return pick(
        "\(named(field)) has a character with \(marks) combining marks; at most \(limit)",
        "\(named(field))に結合文字が多すぎる文字があります (\(marks) 個、上限は \(limit) 個)。")
    case .tooManyCodePoints(let field, let codePoints, let limit):
      return pick(
        "\(named(field)) has a character made of \(codePoints) code points; at most \(limit)",
        "\(named(field))にコードポイントが多すぎる文字があります (\(codePoints) 個、上限は \(limit) 個)。")
    case .queryTooLong(let limit):
      return pick(reason.description, "検索語が長すぎます (上限は \(limit) 文字)。")
    case .cannotBanYourself: return pick(reason.description, "自分自身は締め出せません。")
    case .onlyOwnerChoosesModerators: return ownerOnly
    case .onlyOwnerListsModerators:
      return pick(reason.description, "モデレーターの一覧を見られるのは掲示板の所有者だけです")
    case .onlyAuthorMayDelete(let author, let label): return deleteRefused(author: author, label)
    case .onlyAuthorMayEdit(let author, let label): return editRefused(author: author, label)
    case .imageIsTheBoards:
      return pick(reason.description, "画像は掲示板が設定します (アプリからは設定できません)。")
    case .threadKeepsItsPicture: return pick(reason.description, "スレッドの画像は変えられません。")
    case .privateThreadNotPinned(let number):
      return pick(reason.description, "#\(number) は非公開です。固定できるのは公開スレッドだけです。")
    }
  }

  private func store(_ reason: StoreReason, field: String?) -> String {
    guard japanese else { return reason.description }
    switch reason {
    case .fileTooLarge(let bytes, let limit):
      return "ファイルが大きすぎます (\(bytes) バイト、上限は \(limit) バイト)。"
    case .noSuchUser: return "そのユーザーはいません。"
    case .noSuchParent(let field): return "\(fieldName(field))の指す先がありません。"
    case .alreadyExists: return "\(fieldName(field ?? "value"))はすでに使われています。"
    case .noSuchFile(let name): return "ファイル \(name) はありません。"
    case .mustBeYou(let field): return "\(fieldName(field))はあなたでなければなりません。"
    case .onlyYouMayWrite: return "書き込めるのはあなただけでなければなりません。"
    case .usersAreMadeBySigningIn: return "ユーザーはサインインで作られます。"
    case .writersMustStayTheAuthor: return "書き込める人は投稿者のままでなければなりません。"
    case .onlyRoleMaySet(let field, let role):
      return "\(fieldName(field))を設定できるのは掲示板の所有者と role:\(role) だけです。"
    case .notUTF8: return "\(fieldName(field ?? "value"))が正しい UTF-8 ではありません。"
    case .olderSchema(let owner):
      return "この掲示板は古い forum で作られています。\(owner ? "" : "掲示板の持ち主が ")"
        + "`forum init --db URI` を一度実行してください"
    case .answerTooLarge(let budget):
      return "求めたオブジェクトは一度の応答に収まりません (組み立てに \(budget / 1_048_576) MiB 以上)。数を減らしてください"
    case .banned: return "この掲示板から締め出されています。読むことはできますが、書き込めません"
    }
  }

  /// The file or the server under the board; a library's own words stay in parentheses.
  private func access(_ reason: BoardAccessReason) -> String {
    guard japanese else { return reason.description }
    let upgrade = "新しい forum に更新してください。"
    switch reason {
    case .namesDirectory(let path), .isDirectory(let path):
      return "\(path) はディレクトリです。データベースのファイルを指定してください。"
    case .directoryMissing(let path, let directory):
      return "データベース \(path) を開けません。ディレクトリ \(directory) がありません。"
    case .notRegularFile(let path):
      return "\(path) は通常のファイルではありません (FIFO、デバイスまたはソケット)。"
    case .readOnly(let path): return "データベース \(path) は読み取り専用です。"
    case .anotherProgramsDatabase(let path): return "\(path) はほかのプログラムの SQLite データベースです。"
    case .noWAL(let path): return "データベース \(path) は WAL モードを使えません。"
    case .notSQLite(let path): return "\(path) は forum のデータベースではありません (SQLite のファイルではありません)。"
    case .cannotOpen(let path): return "データベース \(path) を開けません。"
    case .damaged(let path): return "データベース \(path) は壊れています。"
    case .diskFull(let path): return "\(path) のあるディスクがいっぱいです。"
    case .newerRules(let path, let format):
      return "\(path) は新しい forum で作られています (ルール \(format))。" + upgrade
    case .newerSchema(let path, let version):
      return "\(path) は新しい forum で書かれています (スキーマ \(version))。" + upgrade
    case .movedOrDeleted(let path, let nothingWritten):
      return "開いている間にデータベースのファイル \(path) が移動または削除されました。"
        + (nothingWritten ? "何も書き込んでいません。" : "")
    case .cannotCreateDirectory(let path, let error): return "\(path) を作れません (\(error))。"
    case .libpqMissing(let error):
      return "PostgreSQL の掲示板には libpq が必要ですが、読み込めません (\(error))。"
        + "libpq5 を入れてください (Debian: apt-get install libpq5)。"
    case .serverUnreachable(let error):
      return "PostgreSQL サーバーにつながりません (\(error))。--db のホストとポートを確かめてください。"
    case .loginRefused(let error):
      return "PostgreSQL サーバーがログインを断りました (\(error))。ユーザー名とパスワードを確かめるか、"
        + "掲示板の持ち主に追加を頼んでください。"
    case .notForumMember(let role):
      return "ロール \(role) は forum_member のメンバーではありません。掲示板の持ち主に "
        + "`GRANT forum_member TO \(role)` の実行を頼んでください。"
    case .noForumSchema(let database):
      return "データベース \(database) に forum のスキーマがありません。データベースの持ち主が "
        + "`forum init --db URI` を実行してください。"
    case .newerPostgresSchema(let version):
      return "forum のスキーマ (バージョン \(version)) はこの forum より新しいです。" + upgrade
    case .schemaMissing:
      return "forum のスキーマがありません。データベースの持ち主が `forum init` を実行してください。"
    case .connectionLost(let error):
      return "PostgreSQL サーバーとの接続が切れました (\(error))。forum を起動し直してください。"
    }
  }

  private func input(_ reason: InputReason) -> String {
    switch reason {
    case .argumentNotUTF8(let index):
      return pick(reason.description, "引数 \(index) が正しい UTF-8 ではありません。")
    case .answerTooLong: return pick(reason.description, "入力行が長すぎます。")
    case .draftTooLong(let limit):
      return pick(
        "\(named("text")) is longer than \(limit) characters",
        "\(named("text"))が長すぎます (上限は \(limit) 文字)。")
    case .scriptLineTooLong(let megabytes):
      return pick(reason.description, "\(megabytes) MB より長い行なので飛ばしました。")
    }
  }
}
