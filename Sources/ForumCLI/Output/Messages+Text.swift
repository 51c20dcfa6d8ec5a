/// Sentences of the rule that options never sit inside text (README "Text and options").
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  /// `comment 12 --json rocks`: the line could mean either; nothing is posted.
  func optionInsideText(_ option: String, command: String) -> String {
    say(
      "\(option) before text is neither option nor text: put options before the thread "
        + "(\(command) \(option) 12 TEXT), or type the text on the lines after `\(command) 12`",
      "本文の前の \(option) はオプションとも本文とも決められません: オプションはスレッドの前に"
        + "置くか (\(command) \(option) 12 本文)、本文を `\(command) 12` の次の行に入力してください")
  }

  func unknownOptionBeforeText(_ option: String, command: String) -> String {
    say(
      "\(command) has no option \(option); to post text starting with it, type the text on "
        + "the lines after `\(command) 12`",
      "\(command) にオプション \(option) はありません。それで始まる本文は `\(command) 12` の次の行に"
        + "入力してください")
  }
}

/// Sentences of `who`.
extension Messages {
  var youMark: String { japanese ? "(あなた)" : "(you)" }
  var whoNameHeader: String { japanese ? "名前" : "name" }
  var whoHandleHeader: String { japanese ? "ハンドル" : "handle" }
  var whoActiveHeader: String { japanese ? "最後の活動" : "last active" }
  /// `who` of a board with more people than one listing holds.
  func whoShowsSome(_ shown: Int, of count: Int) -> String {
    japanese
      ? "\(count) 人のうち \(shown) 人 (ハンドル順の最初の \(shown) 人) だけを表示しています。"
      : "Showing \(shown) of \(count) people (the first \(shown) by handle)."
  }
  var moderatorMark: String { japanese ? "モデレーター" : "moderator" }
}
