/// Tab completion, from the command declarations.
extension Session {
  /// Tab candidates for the word the cursor is in, given the line up to the cursor: command
  /// words first, then a command's options (for a word starting with `-`) or thread numbers
  /// (`#N` for `comment` inside a thread, where a bare number is prose).
  func completions(for line: String) -> [String] {
    var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    let partial = line.hasSuffix(" ") ? "" : (words.popLast() ?? "")
    guard let name = words.first else { return CommandRegistry.names }
    guard let command = CommandRegistry.named(name) else { return [] }
    let info = command.info
    if partial.hasPrefix("-") {
      return (info.options + info.flags + CommandInfo.commonFlags).map { "--" + $0 }
    }
    if partial.hasPrefix("@") || (info.completion == .handles && words.count == 1) {
      return handles(startingWith: partial)
    }
    guard info.completion == .threads else { return [] }
    let numbers = (try? board.threads(page: 1).items.map { String($0.number) }) ?? []
    let prefix = info.text == .afterThread && currentThread != nil ? "#" : ""
    return numbers.map { prefix + $0 }
  }

  /// `@handles` of the board's users (never yours: nobody messages themself), for `dm @b<Tab>`.
  /// Handles are letters and digits, so they are safe to offer as typed text.
  func handles(startingWith partial: String) -> [String] {
    let users = (try? board.users(handlePrefix: partial)) ?? []
    return users.filter { $0.objectId != board.me.objectId }.map { "@" + $0.userName }
  }
}
