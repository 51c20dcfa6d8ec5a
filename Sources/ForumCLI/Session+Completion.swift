/// Tab completion, from the command declarations.
extension Session {
  /// What Tab offers for the word the cursor is in, given the line up to the cursor: command
  /// words first, then what the command declares for the place the word is in: an option's
  /// names (for a word starting with `-`), an option's value, or a positional argument's.
  func completions(for line: String) -> CompletionAnswer {
    var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    let partial = line.hasSuffix(" ") ? "" : (words.popLast() ?? "")
    guard let name = words.first else { return .words(CommandRegistry.names) }
    guard let command = CommandRegistry.named(name) else { return .words([]) }
    return offer(command.info.completion(before: words, partial: partial), partial, command.info)
  }

  private func offer(_ completion: Completion, _ partial: String, _ info: CommandInfo)
    -> CompletionAnswer
  {
    switch completion {
    case .none: return .words([])
    case .files: return options.door == nil ? .files : .words([])
    case .commands: return .words(CommandRegistry.names)
    case .words(let words): return .words(words)
    case .handles: return .words(handles(startingWith: partial))
    case .threads:
      let numbers = (try? board.threads(page: 1).items.map { String($0.number) }) ?? []
      // Inside a thread a bare number starts `comment`'s text: `#N` names a thread there.
      let prefix = info.text == .afterThread && currentThread != nil ? "#" : ""
      return .words(numbers.map { prefix + $0 })
    }
  }

  /// `@handles` of the board's users (never yours: nobody messages themself), for `dm @b<Tab>`.
  /// Handles are letters and digits, so they are safe to offer as typed text.
  func handles(startingWith partial: String) -> [String] {
    let users = (try? board.users(handlePrefix: partial)) ?? []
    return users.filter { $0.objectId != board.myId }.map { "@" + $0.userName }
  }
}

extension CommandInfo {
  /// What the word being typed may be, from the declarations: `words` are the words before it
  /// (the command's name first). An option's names for a word starting with `-`, an option's
  /// value after it, else the positional argument at that place.
  func completion(before words: [String], partial: String) -> Completion {
    var position = 0
    var index = 1
    while index < words.count {
      let word = words[index]
      index += 1
      if word.hasPrefix("--") && word.count > 2 {
        if !word.contains("="), let option = option(named: String(word.dropFirst(2))),
          option.takesValue
        {
          if index == words.count { return option.completion }
          index += 1
        }
        continue
      }
      position += 1
    }
    if partial.hasPrefix("-") {
      return .words((options + GlobalOptions.perCommand).map { "--" + $0.name })
    }
    if partial.hasPrefix("@") { return .handles }
    guard let argument = position < arguments.count ? arguments[position] : arguments.last,
      position < arguments.count || argument.maximum > 1
    else { return .none }
    return argument.completion
  }
}
