import Foundation
import Testing

@testable import ForumCLI

/// Issue #21: commands are typed declarations, and usage, help (English and Japanese),
/// completion, the parse and "did you mean" are all made from them, never written twice.
@Suite("commands as declarations")
struct DeclarationTests {
  static let since = Option<PageRequest>(
    "since", help: Localized("a test option's help", "テスト用オプションの説明"))
  static let loud = Flag("loud", aliases: ["l"], help: Localized("say it loudly", "大声で言う"))
  static let thread = Argument<ThreadNumber>(
    help: Localized("the thread of the test", "テストのスレッド"), optional: true)
  static let info = CommandInfo(
    name: "probe", summary: Localized("a probe", "探り"), parameters: [thread, since, loud])

  /// A line of `probe`, parsed and resolved as `Session.execute` does.
  static func parse(_ line: String) throws -> Invocation {
    var invocation = try Invocation(
      CommandWords(line: line), info: info, insideThread: false, messages: Messages(japanese: false)
    )
    try invocation.resolve(info, messages: Messages(japanese: false))
    return invocation
  }

  @Test func anOptionDeclaredOnceIsInUsageHelpCompletionAndTheParse() throws {
    #expect(Self.info.usage == "probe [THREAD] [--since N|last] [--loud]")
    let english = Self.info.help(japanese: false, width: 80)
    let japanese = Self.info.help(japanese: true, width: 80)
    #expect(english.contains("--since N|last") && english.contains("a test option's help"))
    #expect(english.contains("--loud, -l") && english.contains("say it loudly"))
    #expect(english.contains("the thread of the test"))
    #expect(japanese.contains("テスト用オプションの説明") && japanese.contains("大声で言う"))
    #expect(!japanese.contains("a test option's help"))

    #expect(Self.info.completion(before: ["probe"], partial: "--").wordsContain("--since"))
    #expect(Self.info.completion(before: ["probe"], partial: "-").wordsContain("--loud"))
    #expect(Self.info.completion(before: ["probe"], partial: "-").wordsContain("--json"))
    #expect(Self.info.completion(before: ["probe", "--since"], partial: "") == .words(["last"]))
    #expect(Self.info.completion(before: ["probe"], partial: "") == .threads)
    #expect(Self.info.completion(before: ["probe", "--since", "2", "3"], partial: "") == .none)

    let parsed = try Self.parse("probe --since last 12 -l")
    #expect(parsed[Self.since] == .last)
    #expect(parsed[Self.loud])
    #expect(parsed[Self.thread]?.number == 12)
    let plain = try Self.parse("probe #4 --since=3")
    #expect(plain[Self.since] == .number(3) && !plain[Self.loud] && plain[Self.thread]?.number == 4)
    // A value the type refuses is a usage error before anything runs.
    #expect(throws: CLIError.self) { try Self.parse("probe --since never") }
    #expect(throws: CLIError.self) { try Self.parse("probe abc") }
    #expect(throws: CLIError.self) { try Self.parse("probe --lodu") }
  }

  /// Every command's options carry help in both languages, and `help COMMAND` shows it; the
  /// usage line names each one (or `[options]`, whose list is right below).
  @Test func everyCommandsHelpComesFromItsDeclaration() {
    for command in CommandRegistry.all {
      let info = command.info
      let english = info.help(japanese: false, width: 100)
      let japanese = info.help(japanese: true, width: 100)
      for option in info.options {
        #expect(!option.help.english.isEmpty && !option.help.japanese.isEmpty, "\(info.name)")
        #expect(option.help.english != option.help.japanese, "\(info.name) --\(option.name)")
        #expect(english.contains(option.usage), "\(info.name): \(option.usage)")
        #expect(english.contains(option.help.english), "\(info.name): \(option.name)")
        #expect(japanese.contains(option.help.japanese), "\(info.name): \(option.name)")
        #expect(
          info.usage.contains(option.usage) || info.usage.contains("[options]"),
          "\(info.name): \(info.usage)")
        #expect(
          info.completion(before: [info.name], partial: "-").wordsContain("--" + option.name),
          "\(info.name)")
      }
      for argument in info.arguments {
        #expect(info.usage.contains(argument.label), "\(info.name): \(argument.label)")
      }
      // The global options are the global group's, listed there once, not again per command.
      for global in GlobalOptions.perCommand {
        #expect(!english.contains(global.help.english), "\(info.name) repeats --\(global.name)")
      }
    }
  }

  /// A command is found by its name and aliases without building any declaration (issue 21:
  /// `unread --count` paid for `list`'s, `show`'s and `search`'s); the declaration carries
  /// the same ones, and no two commands share a spelling.
  @Test func commandsAreFoundByTheNamesTheirDeclarationsCarry() {
    var seen: Set<String> = []
    for command in CommandRegistry.all {
      #expect(command.info.name == command.name)
      #expect(command.info.aliases == command.aliases, "\(command.name)")
      for word in [command.name] + command.aliases {
        #expect(seen.insert(word).inserted, "\(word) names two commands")
        #expect(CommandRegistry.named(word.uppercased()) == command, "\(word)")
      }
    }
  }

  /// Each global option is listed exactly once in `forum --help` and `help`, in both languages,
  /// as the one declared list says; each declared spelling parses.
  @Test func globalOptionsAreListedOnce() throws {
    let forum = try ForumFixture()
    for arguments in [["--help"], ["help"]] {
      for lang in ["C", "ja_JP.UTF-8"] {
        let result = try forum.run(arguments, lang: lang)
        #expect(result.status == 0)
        let lines = result.stdoutLines
        for option in GlobalOptions.declared {
          let listed = lines.filter { line in
            [" ", ",", ""].contains { line.hasPrefix("  --\(option.name)" + $0) }
              && !line.hasPrefix("  --\(option.name)-")
          }
          #expect(listed.count == 1, "\(arguments) \(lang) --\(option.name): \(listed)")
          // Its help, wrapped or not.
          let help = option.help.text(japanese: lang != "C").split(separator: " ").joined()
          let all = lines.joined().split(separator: " ").joined()
          #expect(all.contains(help), "\(arguments) \(lang) --\(option.name)")
        }
      }
    }
    let json = try forum.ok(["--json", "help"]).json()
    let names = (json["options"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    #expect(names == GlobalOptions.declared.map { "--" + $0.name })
    for option in GlobalOptions.declared {
      for spelling in option.spellings {
        let value = option.takesValue ? ["none"] : []
        let parsed = try GlobalOptions(
          arguments: [(spelling.count == 1 ? "-" : "--") + spelling] + value + ["list"],
          environment: [:])
        #expect(parsed.command == ["list"], "--\(spelling)")
      }
    }
  }

  /// "Did you mean" for options, from the command's declarations and the global group.
  @Test func mistypedOptionsSuggestTheNearest() throws {
    let forum = try ForumFixture()
    let command = try forum.run(["list", "--pgae", "2"])
    #expect(command.status == 2)
    #expect(command.stderr == "forum: unknown option --pgae. Did you mean --page?\n")
    let global = try forum.run(["--jsno", "list"])
    #expect(global.status == 2)
    #expect(
      global.stderr == "forum: unknown option --jsno. Did you mean --json? See forum --help\n")
    let japanese = try forum.run(["show", "1", "--pag", "2"], lang: "ja_JP.UTF-8")
    #expect(japanese.status == 2)
    #expect(japanese.stderr == "forum: 不明なオプション --pag。もしかして --page?\n")
    // A value its type refuses is one usage line too, before the board is touched.
    let page = try forum.run(["list", "--page", "zero"])
    #expect(page.status == 2)
    #expect(page.stderrLines.count == 1)
  }
}

extension Completion {
  fileprivate func wordsContain(_ word: String) -> Bool {
    if case .words(let words) = self { return words.contains(word) }
    return false
  }
}

/// The prompt's navigation state has one owner, and its rules hold there.
@Suite("navigation state")
struct NavigationStateTests {
  @Test func anotherThreadStartsUnseenAndScriptsHaveNone() {
    let prompt = Navigation(atPrompt: true)
    prompt.enter(3)
    prompt.saw(upTo: 7, in: 3)
    #expect(prompt.currentThread == 3 && prompt.newestSeenComment == 7)
    prompt.posted(8, in: 3)
    #expect(prompt.newestSeenComment == 8, "one's own comment right after needs no echo")
    prompt.posted(10, in: 3)
    #expect(prompt.newestSeenComment == 8, "comment 9 arrived meanwhile: it is still to show")
    prompt.saw(upTo: 20, in: 4)
    #expect(prompt.newestSeenComment == 8, "another thread's comments are not this one's")
    prompt.enter(4)
    #expect(prompt.currentThread == 4 && prompt.newestSeenComment == nil)
    prompt.leave()
    #expect(prompt.currentThread == nil && prompt.watched == nil)

    let script = Navigation(atPrompt: false)
    script.enter(3)
    #expect(script.currentThread == nil)
    script.listed(.threads(page: 2))
    guard case .threads(page: 2) = script.lastListing else {
      Issue.record("a script's listing is still continued by next")
      return
    }
  }
}
