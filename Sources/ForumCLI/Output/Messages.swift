import Datastore
import Forum

/// Every sentence the CLI says to a person, in English and Japanese.
struct Messages {
  let japanese: Bool

  func pick(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  var emptyBoard: String {
    pick(
      "The board is empty. Post the first thread with: new --title \"Hello\"",
      "掲示板はまだ空です。最初のスレッドは次のように投稿できます: new --title \"こんにちは\"")
  }
  var noComments: String { pick("No comments yet.", "コメントはまだありません。") }
  var interrupted: String { pick("Interrupted; nothing was saved.", "中断しました。何も保存していません。") }
  var noEditor: String {
    pick(
      "set VISUAL or EDITOR to compose in an editor", "エディタで書くには VISUAL か EDITOR を設定してください")
  }
  func savedDraftHeading(_ target: String) -> String {
    pick("Your unsent draft for \(target) from before:", "\(target) への送信されなかった下書きがあります:")
  }
  func useSavedDraft(_ target: String) -> String {
    pick(
      "Post it to \(target)? [Y/n] (n discards it) ", "これを \(target) に投稿しますか? [Y/n] (n で破棄) ")
  }
  func olderDraftsSetAside(_ count: Int, directory: String) -> String {
    pick(
      count == 1
        ? "an unsent draft an older forum kept without its board and profile is now in"
          + " \(directory); it is never offered, copy from it what you need"
        : "\(count) unsent drafts an older forum kept without their board and profile are now in"
          + " \(directory); they are never offered, copy from them what you need",
      "古い forum がボードとプロファイルなしで保存した未送信の下書き \(count) 件を \(directory) に"
        + "移しました。提案はしません。必要なものはそこからコピーしてください")
  }
  func pagerFailed(_ command: String) -> String {
    pick(
      "the pager \"\(command)\" could not run (check PAGER); showing the output without it",
      "ページャ「\(command)」を実行できません (PAGER を確認してください)。そのまま表示します")
  }
  var answerYesOrNo: String {
    pick("Please answer y or n.", "y か n で答えてください。")
  }
  var aNewThread: String { pick("a new thread", "新しいスレッド") }
  func draftKept(_ target: String) -> String {
    pick(
      "Your text for \(target) is kept; it is offered again when you next write there.",
      "\(target) への文章は保存しました。次にそこへ書くときにもう一度表示します。")
  }
  func draftNotSaved(_ reason: String) -> String {
    pick(
      "your draft cannot be saved (\(reason)); if it is not posted, it is printed here",
      "下書きを保存できません (\(reason))。投稿されなければここに表示します")
  }
  func tooManyDrafts(_ limit: Int, directory: String) -> String {
    pick(
      "your draft cannot be saved: \(limit) unsent drafts are kept already, the most there may be"
        + " (post or discard one; they are in \(directory)); if it is not posted, it is printed"
        + " here",
      "下書きを保存できません。未送信の下書きはすでに上限の \(limit) 件あります (どれかを投稿するか"
        + "破棄してください。場所は \(directory))。投稿されなければここに表示します")
  }
  var draftPrinted: String {
    pick(
      "Your text could not be saved; here it is, so that it is not lost:",
      "文章を保存できなかったので、失われないようにここに表示します:")
  }
  var waitingForWriter: String {
    pick(
      "waiting for another writer… Ctrl-C to stop",
      "ほかの書き込みを待っています… Ctrl-C で中止します")
  }
  var upgradingBoard: String {
    pick(
      "updating the board's file for this version of forum (once; a large board takes seconds)…",
      "掲示板のファイルをこの版の forum 向けに更新しています (一度だけです。大きな掲示板では数秒かかります)…")
  }
  func banner(_ version: String, _ name: String) -> String {
    pick(
      "forum \(version) — \(name). Type 'help' for commands, Ctrl-D to leave.",
      "forum \(version) — \(name)。コマンドの一覧は 'help'、終了は Ctrl-D です。")
  }
  var cancelled: String { pick("Cancelled; nothing was saved.", "取り消しました。何も保存していません。") }
  var deleteNeedsYes: String {
    pick(
      "delete asks for confirmation; from a script add --yes",
      "delete は確認が必要です。スクリプトからは --yes を付けてください")
  }
  var confirmDelete: String { pick("Delete? [y/N] ", "削除しますか? [y/N] ") }
  var titlePrompt: String { pick("Title: ", "タイトル: ") }
  var descriptionPrompt: String {
    pick(
      "Description (end with a line holding a single \".\"):",
      "本文 (「.」だけの行で終わります):")
  }
  var commentPrompt: String {
    pick("Comment (end with a line holding a single \".\"):", "コメント (「.」だけの行で終わります):")
  }
  var imagePrompt: String {
    pick("Image path (Enter for none): ", "画像のパス (なければ Enter): ")
  }
  var metadataRemoved: String { pick("removed", "削除済み") }
  func commentCount(_ count: Int) -> String {
    pick(count == 1 ? "1 comment" : "\(count) comments", "コメント \(count) 件")
  }
  var page: String { pick("page", "ページ") }
  var more: String { pick("more", "続き") }
  var you: String { pick("you", "あなた") }
  var by: String { pick("by", "投稿者") }
  var posted: String { pick("posted", "投稿") }
  var updated: String { pick("active", "更新") }

  func imageRefused(_ rejection: ImageRejection) -> String {
    pick("cannot attach image: ", "画像を添付できません: ") + rejection.wording.text(japanese: japanese)
  }

  /// A field by its Japanese name (`FieldName`); in English as it is spelled.
  func fieldName(_ field: String) -> String { japanese ? FieldName.of(field).japanese : field }

  /// A page number past the last page, with a command to try instead.
  func pastTheEnd(_ page: Int, _ command: String) -> String {
    pick("There is no page \(page). Try: \(command)", "\(page) ページはありません。次を試してください: \(command)")
  }

  func usage(_ text: String) -> String { pick("usage: \(text)", "使い方: \(text)") }
  func whichThread(_ example: String) -> String {
    pick("which thread? e.g. \(example)", "どのスレッドですか? 例: \(example)")
  }
  var noCurrentThread: String {
    pick(
      "/N means a comment of the current thread, and there is none here; write 12/3",
      "/N は現在のスレッドのコメントですが、ここには現在のスレッドがありません。12/3 のように書いてください")
  }
  func needsValue(_ option: String) -> String {
    pick("\(option) needs a value", "\(option) には値が必要です")
  }
  func unknownOption(_ option: String, suggestion: String? = nil) -> String {
    pick("unknown option \(option)", "不明なオプション \(option)")
      + (suggestion.map { pick(". Did you mean \($0)?", "。もしかして \($0)?") } ?? "")
  }
  func unknownGlobalOption(_ option: String, suggestion: String? = nil) -> String {
    guard let suggestion else {
      return unknownOption(option) + pick("; see forum --help", "。forum --help を参照")
    }
    return unknownOption(option, suggestion: suggestion)
      + pick(" See forum --help", " forum --help を参照")
  }
  var imagesTakes: String {
    pick(
      "--images takes auto, kitty, iterm, blocks or none",
      "--images には auto、kitty、iterm、blocks、none のどれかを指定します")
  }
  var nothingToContinue: String {
    pick(
      "nothing to continue yet: list or show a thread first",
      "続きがありません。先に list か show を使ってください")
  }
  var firstPage: String { pick("This is the first page.", "最初のページです。") }
  var imageAskAgain: String {
    pick(
      "Type another path, or press Enter to post without an image.",
      "別のパスを入力するか、Enter で画像なしで投稿します。")
  }
  var image: String { pick("image", "画像") }
  func noImage(_ thread: Int) -> String {
    pick("thread #\(thread) has no image", "スレッド #\(thread) には画像がありません")
  }
  func saved(_ size: String, _ path: String) -> String {
    pick("Saved \(size) to \(path).", "\(size) を \(path) に保存しました。")
  }
  func currentThreadGone(_ thread: Int) -> String {
    pick(
      "Thread #\(thread) was deleted; you have left it.",
      "スレッド #\(thread) は削除されました。スレッドを離れました。")
  }
  var unclosedQuote: String { pick("unclosed quote", "引用符が閉じていません") }
  func notANumber(_ what: String, _ text: String) -> String {
    pick(
      "\(what) must be a number like 12, not '\(text)'",
      "\(fieldName(what))は 12 のような数で指定してください ('\(text)' ではなく)")
  }

  func deleted(_ what: String) -> String { pick("Deleted \(what).", "\(what) を削除しました。") }
  func posted(_ what: String) -> String { pick("Posted \(what).", "\(what) を投稿しました。") }
  func willDelete(_ what: String) -> String {
    pick("This will delete \(what).", "\(what) を削除します。")
  }
  func unknownCommand(_ word: String, suggestion: String?) -> String {
    let hint = suggestion.map { pick(" Did you mean '\($0)'?", " もしかして '\($0)'?") } ?? ""
    return pick("unknown command '\(word)'.", "不明なコマンド '\(word)'。") + hint
      + pick(" Type 'help' for the list.", " 一覧は 'help' で。")
  }
  func lineError(_ line: Int, _ message: String) -> String {
    pick("line \(line): \(message)", "\(line) 行目: \(message)")
  }
  func renamed(_ name: String) -> String {
    pick("You are now \(name).", "表示名を \(name) に変更しました。")
  }
  func age(seconds: Int64) -> String {
    switch seconds {
    case ..<60: return pick("now", "今")
    case ..<3600: return pick("\(seconds / 60)m", "\(seconds / 60)分")
    case ..<86_400: return pick("\(seconds / 3600)h", "\(seconds / 3600)時間")
    case ..<(86_400 * 365): return pick("\(seconds / 86_400)d", "\(seconds / 86_400)日")
    default: return pick("\(seconds / (86_400 * 365))y", "\(seconds / (86_400 * 365))年")
    }
  }
}
