/// Sentences of the notices for replies to you and mentions of your `@handle`.
extension Messages {
  private func say(_ english: String, _ japanese: String) -> String {
    self.japanese ? japanese : english
  }

  func replyNotice(_ who: String, reference: String, yours: String, text: String) -> String {
    let thread = reference.split(separator: "/").first.map(String.init) ?? reference
    return say(
      "↩ \(who) replied to your \(yours) in \(reference): \(text) — show \(thread)",
      "↩ \(who) があなたの \(yours) に返信しました (\(reference)): \(text) — show \(thread)")
  }

  func mentionNotice(_ who: String, reference: String, text: String) -> String {
    let thread = reference.split(separator: "/").first.map(String.init) ?? reference
    return say(
      "@ \(who) mentioned you in \(reference): \(text) — show \(thread)",
      "@ \(who) があなたに言及しました (\(reference)): \(text) — show \(thread)")
  }

  func moreAddressed(_ count: Int) -> String {
    say("… and \(count) more replies or mentions for you", "… ほかにもあなた宛ての返信や言及が \(count) 件")
  }
}
