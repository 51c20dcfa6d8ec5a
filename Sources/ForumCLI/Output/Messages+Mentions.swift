/// Sentences of the notices for replies to you and mentions of your `@handle`.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  /// `reference` is the new comment's `12/14`: named as `#12/14`, and `show 12/14` opens it.
  func replyNotice(_ who: String, reference: String, yours: String, text: String) -> String {
    say(
      "↩ \(who) replied to your \(yours) in #\(reference): \(text) — show \(reference)",
      "↩ \(who) があなたの \(yours) に返信しました (#\(reference)): \(text) — show \(reference)")
  }

  func mentionReachesNobody(_ name: String, count: Int) -> String {
    say(
      "nobody was told of @\(name): \(count) people are called \(name); use their @handle"
        + " (`who` lists them)",
      "@\(name) は誰にも通知されません: \(name) という名前の人が \(count) 人います。@ハンドルで"
        + "指定してください (`who` で一覧できます)")
  }

  func mentionNotice(_ who: String, reference: String, text: String) -> String {
    say(
      "@ \(who) mentioned you in #\(reference): \(text) — show \(reference)",
      "@ \(who) があなたに言及しました (#\(reference)): \(text) — show \(reference)")
  }

  func moreAddressed(_ count: Int) -> String {
    say("… and \(count) more replies or mentions for you", "… ほかにもあなた宛ての返信や言及が \(count) 件")
  }
}
