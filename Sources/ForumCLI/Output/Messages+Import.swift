/// `forum import ncmb`'s sentences.
extension Messages {
  func importLine(
    _ name: String, imported: Int, unchanged: Int, refused: Int, conflicts: [String],
    hangingOnRefused: [String] = []
  ) -> String {
    var line = pick(
      "\(name): imported \(imported), unchanged \(unchanged), refused \(refused)",
      "\(name): 取り込み \(imported)、変更なし \(unchanged)、拒否 \(refused)")
    func shown(_ labels: [String]) -> String {
      labels.prefix(5).joined(separator: ", ") + (labels.count > 5 ? ", …" : "")
    }
    if !conflicts.isEmpty {
      line += pick(
        " (already on the board with other values: \(shown(conflicts)))",
        " (別の内容ですでに掲示板にあります: \(shown(conflicts)))")
    }
    if !hangingOnRefused.isEmpty {
      line += pick(
        " (their thread or picture was refused: \(shown(hangingOnRefused)))",
        " (スレッドか画像が拒否されたため: \(shown(hangingOnRefused)))")
    }
    return line
  }

  func importNeedsPassword(_ name: String, objectId: String) -> String {
    pick(
      "need a new password: \(name) (\(objectId)): NCMB's password hashes cannot be used",
      "新しいパスワードが必要: \(name) (\(objectId)): NCMB のパスワードハッシュは使えません")
  }

  func importNothingWritten(_ count: Int) -> String {
    pick(
      "import refused: \(count) problem\(count == 1 ? "" : "s") above; nothing was written",
      "取り込みを中止しました: 上の \(count) 件の問題のため、何も書き込んでいません")
  }

  func importNoDirectory(_ path: String) -> String {
    pick("\(path): no such directory", "\(path): ディレクトリがありません")
  }

  func importRenameUnknown(_ name: String) -> String {
    pick(
      "--rename \(name)=…: the export has no \(name).json",
      "--rename \(name)=…: エクスポートに \(name).json がありません")
  }

  func importRenameTaken(_ from: String, _ to: String) -> String {
    pick(
      "--rename \(from)=\(to): \(to) is the board's own class or another class of the export",
      "--rename \(from)=\(to): \(to) は掲示板自身のクラスか、エクスポートの別のクラスです")
  }

  func importSkipped(_ name: String) -> String {
    pick(
      "\(name): not imported (push notifications and installations are not supported)",
      "\(name): 取り込みません (プッシュ通知と端末登録は未対応です)")
  }

  func importBadJSON(_ name: String) -> String {
    pick("\(name): not valid JSON (UTF-8)", "\(name): JSON (UTF-8) として読めません")
  }

  func importNoResults(_ name: String) -> String {
    pick(
      "\(name): not an export ({\"results\":[…]} expected)",
      "\(name): エクスポートの形ではありません ({\"results\":[…]} のはず)")
  }

  func importNotAnObject(_ name: String, index: Int) -> String {
    pick(
      "\(name) #\(index + 1): not an object", "\(name) #\(index + 1): オブジェクトではありません")
  }

  func importMissing(_ name: String) -> String {
    pick("\(name): missing or not a regular file", "\(name): ないか、通常のファイルではありません")
  }

  func importTooLarge(_ name: String, bytes: Int, limit: Int) -> String {
    pick(
      "\(name): \(bytes) bytes, over the limit of \(limit)",
      "\(name): \(bytes) バイトで、上限 \(limit) を超えています")
  }

  func importMissingField(_ place: String, _ field: String) -> String {
    pick("\(place): no \(field)", "\(place): \(field) がありません")
  }

  func importDuplicate(_ file: String, _ id: String) -> String {
    pick("\(file): \(id) appears twice", "\(file): \(id) が 2 回あります")
  }

  func importBadField(_ place: String, _ field: String, _ reason: String) -> String {
    pick("\(place): \(field) is invalid: \(reason)", "\(place): \(field) が不正です: \(reason)")
  }

  /// A user's name another user has (on the board, or in the export).
  func importNameTaken(_ place: String, _ name: String, by other: String, onBoard: Bool) -> String {
    onBoard
      ? pick(
        "\(place): userName \(name) is another user's on the board (\(other))",
        "\(place): userName \(name) は掲示板の別のユーザー (\(other)) のものです")
      : pick(
        "\(place): userName \(name) is also user \(other)'s in user.json",
        "\(place): userName \(name) は user.json のユーザー \(other) と同じです")
  }

  func importBoardClass(_ name: String) -> String {
    pick(
      "\(name).json: \(name) is the board's own class; import the app's under another name "
        + "with --rename \(name)=App\(name)",
      "\(name).json: \(name) は掲示板自身のクラスです。--rename \(name)=App\(name) で"
        + "別の名前にして取り込んでください")
  }

  /// A `Thread`/`Comment` the board cannot take as its own: `field` does not fit.
  func importNotBoardShaped(_ name: String, field: String) -> String {
    pick(
      "\(name).json: not the board's \(name) (\(field)); import it as the app's own class with "
        + "--rename \(name)=App\(name)",
      "\(name).json: 掲示板の \(name) の形ではありません (\(field))。--rename \(name)=App\(name) "
        + "でアプリ自身のクラスとして取り込んでください")
  }

  func importNoAuthor(_ place: String) -> String {
    pick(
      "\(place): no author (a user pointer, or one user allowed to write in its acl)",
      "\(place): 書いた人がわかりません (user のポインタか、acl で書き込めるユーザー 1 人が必要です)")
  }

  func importNoThread(_ place: String, _ threadId: String) -> String {
    pick(
      "\(place): its thread \(threadId) is not in Thread.json",
      "\(place): スレッド \(threadId) が Thread.json にありません")
  }

  func importNarrowerThanThread(_ place: String) -> String {
    pick(
      "\(place): fewer may read it than its thread (the board shows a thread's comments to "
        + "everyone who reads the thread)",
      "\(place): スレッドより読める人が少ないコメントです (掲示板はスレッドを読める全員に"
        + "コメントを見せます)")
  }

  func importNoPicture(_ place: String, _ fileName: String) -> String {
    pick(
      "\(place): fileName \(fileName) is not a picture in files.json",
      "\(place): fileName \(fileName) は files.json の画像ではありません")
  }

  func importChanged(_ name: String) -> String {
    pick(
      "\(name) changed while it was imported; run the import again",
      "\(name) が取り込み中に変わりました。もう一度実行してください")
  }

  func importModeratorRole(_ place: String) -> String {
    pick(
      "\(place): a role named moderator would moderate the board; rename it in role.json",
      "\(place): moderator という名前のロールは掲示板のモデレーターになります。role.json で名前を変えてください")
  }

  func importEscapes(_ place: String) -> String {
    pick(
      "\(place): the name leads outside the files folder", "\(place): 名前が files フォルダの外を指しています")
  }
}
