/// Why a statement was stopped before it finished (`Reason.stopped`).
public enum StatementStop: Sendable, Equatable, Codable {
  /// It ran past the time limit the server sets for each request.
  case timeLimit(seconds: Double)
  /// The client that asked hung up.
  case clientGone
  /// The server was told to stop at once (a second SIGTERM or Ctrl-C).
  case serverStopping

  public var wording: Wording {
    switch self {
    case .timeLimit(let seconds):
      let shown =
        seconds == seconds.rounded() ? String(Int(seconds)) : String((seconds * 10).rounded() / 10)
      return Wording(
        "the request ran past the server's limit of \(shown) s and was stopped; "
          + "nothing was written",
        "要求がサーバーの制限時間 \(shown) 秒を超えたので止めました。何も書き込んでいません。")
    case .clientGone:
      return Wording(
        "the client hung up; the request was stopped and nothing was written",
        "クライアントが切断したので要求を止めました。何も書き込んでいません。")
    case .serverStopping:
      return Wording(
        "the server is stopping; the request was stopped and nothing was written",
        "サーバーが停止するので要求を止めました。何も書き込んでいません。")
    }
  }
}
