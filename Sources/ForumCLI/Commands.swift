/// The commands people type, at the prompt or after `forum` on the command line.
struct CommandSpec {
  let name: String
  let usage: String
  let summary: String
  let details: String
  let options: Set<String>
  let flags: Set<String>
  let arguments: ClosedRange<Int>

  static let all: [CommandSpec] = [
    CommandSpec(
      name: "list", usage: "list [--page N]",
      summary: "threads, most recent activity first, 20 a page",
      details: "Shows number, title, the start of the description, author, comment count, age, "
        + "and ▣ when the thread has an image. Your own threads are marked ●.",
      options: ["page"], flags: [], arguments: 0...0),
    CommandSpec(
      name: "show", usage: "show THREAD [--page N|last]",
      summary: "a thread with its image and comments, 20 a page",
      details: "THREAD is a number like 12 or #12. At the prompt it becomes the current thread, "
        + "so `comment` and `delete 3` act on it, and new comments in it appear as they arrive.",
      options: ["page"], flags: [], arguments: 0...1),
    CommandSpec(
      name: "new", usage: "new [--title T] [--description D] [--image PATH]",
      summary: "post a thread; asks for what is missing",
      details: "The description ends with a line holding a single `.`. The image may be PNG, "
        + "JPEG, GIF or WebP up to 5 MB; location and camera data are removed before storing.",
      options: ["title", "description", "image"], flags: [], arguments: 0...0),
    CommandSpec(
      name: "comment", usage: "comment [THREAD] [TEXT]",
      summary: "comment on a thread (the current one at the prompt)",
      details: "Without TEXT, reads lines until a line holding a single `.`.",
      options: [], flags: [], arguments: 0...Int.max),
    CommandSpec(
      name: "delete", usage: "delete THREAD | THREAD/COMMENT [--yes]",
      summary: "delete your own thread (with its comments and image) or comment",
      details: "Shows what will go and asks first; --yes skips the question (needed in scripts). "
        + "With a current thread, `delete 3` means its comment 3 and `delete #3` thread 3.",
      options: [], flags: ["yes", "y"], arguments: 1...1),
    CommandSpec(
      name: "image", usage: "image THREAD [--save PATH [--force]]",
      summary: "show a thread's image large, or save it to disk",
      details: "--save writes the stored bytes exactly; an existing file is kept unless --force.",
      options: ["save"], flags: ["force"], arguments: 0...1),
    CommandSpec(
      name: "whoami", usage: "whoami", summary: "your display name, user id, profile and database",
      details: "", options: [], flags: [], arguments: 0...0),
    CommandSpec(
      name: "name", usage: "name NEW_NAME", summary: "set your display name (1 to 40 characters)",
      details: "", options: [], flags: [], arguments: 1...Int.max),
    CommandSpec(
      name: "help", usage: "help [COMMAND]", summary: "this list, or one command in detail",
      details: "", options: [], flags: [], arguments: 0...1),
    CommandSpec(
      name: "quit", usage: "quit", summary: "leave (Ctrl-D does too)", details: "", options: [],
      flags: [], arguments: 0...0),
  ]

  var helpText: String {
    var text = "usage: \(usage)\n  \(summary)"
    for line in SafeText.wrap(details, to: 76) where !details.isEmpty { text += "\n  " + line }
    return text
  }

  static func overview() -> String {
    let width = CommandSpec.all.map(\.usage.count).max() ?? 0
    var lines = ["Commands:"]
    for spec in CommandSpec.all {
      lines.append(
        "  " + spec.usage.padding(toLength: width, withPad: " ", startingAt: 0)
          + "  " + spec.summary)
    }
    lines.append("")
    lines.append(
      "Options: --db PATH, --profile NAME, --json, --no-color, --images auto|kitty|iterm|blocks|none"
    )
    return lines.joined(separator: "\n")
  }

  /// The command `word` names; a usage error suggesting the nearest command otherwise.
  static func lookup(_ word: String, messages: Messages) throws -> CommandSpec {
    guard let spec = named(word.lowercased()) else {
      throw CLIError.usage(
        messages.unknownCommand(SafeText.sanitize(word), suggestion: suggestion(for: word)))
    }
    return spec
  }

  /// What `help [TOPIC]` prints.
  static func help(topic: String?, messages: Messages) throws -> String {
    guard let topic else { return overview() }
    return try lookup(topic, messages: messages).helpText
  }

  static func named(_ name: String) -> CommandSpec? {
    let aliases = ["exit": "quit", "ls": "list", "rm": "delete", "?": "help"]
    let name = aliases[name] ?? name
    return all.first { $0.name == name }
  }

  /// The command nearest to a mistyped word, if any is close.
  static func suggestion(for word: String) -> String? {
    let scored = all.map { ($0.name, editDistance($0.name, word.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(1, word.count / 2) else {
      return all.first { $0.name.hasPrefix(word.lowercased()) && !word.isEmpty }?.name
    }
    return best.0
  }

  private static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    var row = Array(0...b.count)
    for i in 1...max(a.count, 1) where !a.isEmpty {
      var previous = row[0]
      row[0] = i
      for j in stride(from: 1, through: b.count, by: 1) {
        let saved = row[j]
        row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
        previous = saved
      }
    }
    return row[b.count]
  }
}
