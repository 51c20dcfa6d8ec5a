/// What opening a board says when a name may have been mistyped (`--profile`, `--db`).
extension Messages {
  /// The profile had no user on this board: opening it made one.
  func newProfile(_ name: String) -> String {
    japanese
      ? "この掲示板では新しいプロファイル \"\(name)\" です"
      : "new profile \"\(name)\" on this board"
  }

  /// No file was at the board's path: opening it made an empty board.
  func newBoard(_ path: String) -> String {
    japanese
      ? "新しい掲示板 \(path) を作りました (そこにファイルはありませんでした)"
      : "new board \(path) (there was no file there)"
  }
}
