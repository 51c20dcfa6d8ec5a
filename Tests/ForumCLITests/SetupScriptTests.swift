import Foundation
import Spawning
import Testing

/// Issue 21, "a fresh machine": the README's first two commands install what is missing, say
/// what, and use the one package list CI uses. The packages cannot be removed from a shared
/// machine, so `dpkg-query`, `apt-get` and `sudo` are stand-ins on PATH that record their calls.
@Suite("Scripts/setup on a fresh machine (stand-in dpkg)")
struct SetupScriptTests {
  private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  private struct Machine {
    let directory: String
    var log: String { directory + "/apt.log" }

    init() throws {
      directory = NSTemporaryDirectory() + "/setup-\(UUID().uuidString)"
      let bin = directory + "/bin"
      try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
      let tools = [
        "dpkg-query": """
        #!/bin/sh
        for p in $FAKE_INSTALLED; do [ "$p" = "$3" ] && { printf 'install ok installed'; exit 0; }; done
        exit 1
        """,
        "apt-get": "#!/bin/sh\necho \"apt-get $*\" >> \"$FAKE_LOG\"\n",
        "sudo": "#!/bin/sh\necho \"sudo\" >> \"$FAKE_LOG\"\nexec \"$@\"\n",
      ]
      for (name, text) in tools {
        try (text + "\n").write(toFile: bin + "/" + name, atomically: true, encoding: .utf8)
        chmod(bin + "/" + name, 0o755)
      }
    }

    func setup(_ what: String, installed: [String]) throws -> (
      status: Int32, said: String, apt: [String]
    ) {
      try? FileManager.default.removeItem(atPath: log)
      let process = ChildProcess()
      process.executableURL = URL(fileURLWithPath: "/bin/bash")
      process.arguments = [SetupScriptTests.root + "/Scripts/setup", what]
      process.environment = [
        "PATH": directory + "/bin:/usr/bin:/bin",
        "FAKE_INSTALLED": installed.joined(separator: " "),
        "FAKE_LOG": log,
      ]
      let stderr = Pipe()
      process.standardError = stderr
      process.standardOutput = FileHandle.nullDevice
      try process.run()
      let said = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      let apt = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        .split(separator: "\n").map(String.init).filter { $0 != "sudo" }
      return (process.terminationStatus, said, apt)
    }
  }

  private func list() throws -> [String] {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [Self.root + "/Scripts/setup", "list"]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.split(separator: "\n").map(String.init)
  }

  @Test func installsExactlyWhatIsMissingAndSaysWhat() throws {
    let machine = try Machine()
    defer { try? FileManager.default.removeItem(atPath: machine.directory) }
    let all = try list()
    #expect(all.contains("libgif-dev") && all.contains("libwebp-dev") && all.contains("tmux"))

    let fresh = try machine.setup("build", installed: [])
    #expect(fresh.status == 0, "\(fresh)")
    let build = fresh.said.split(separator: " ").dropFirst(3).joined(separator: " ")
      .trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(fresh.said.hasPrefix("forum setup: installing libsqlite3-dev "), "\(fresh.said)")
    #expect(fresh.apt.last == "apt-get install -y -qq " + build, "\(fresh.apt)")
    #expect(!build.contains("tmux"), "tmux is for the tests: \(build)")

    let two = try machine.setup(
      "test", installed: all.filter { $0 != "libgif-dev" && $0 != "tmux" })
    #expect(two.said == "forum setup: installing libgif-dev tmux\n", "\(two)")
    #expect(two.apt == ["apt-get update -qq", "apt-get install -y -qq libgif-dev tmux"], "\(two)")
    let buildOnly = try machine.setup("build", installed: all.filter { $0 != "tmux" })
    #expect(buildOnly.said.isEmpty && buildOnly.apt.isEmpty, "\(buildOnly)")

    let done = try machine.setup("test", installed: all)
    #expect(done.status == 0 && done.said.isEmpty && done.apt.isEmpty, "\(done)")
    #expect(try machine.setup("bogus", installed: all).status == 2)
  }

  @Test func theReadmeAndCIUseTheOneList() throws {
    let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
    let firstBlock =
      readme.components(separatedBy: "```sh\n").dropFirst().first?
      .components(separatedBy: "```").first ?? ""
    let commands = firstBlock.split(separator: "\n").map { $0.split(separator: " ").first ?? "" }
    #expect(commands == ["Scripts/forum", "Scripts/test"], "\(firstBlock)")
    let ci = try String(contentsOfFile: Self.root + "/.ci/run", encoding: .utf8)
    #expect(ci.contains("bash Scripts/test"))
    #expect(!ci.contains("apt-get") && !ci.contains("dpkg-query"), "a second list in .ci/run")
    let test = try String(contentsOfFile: Self.root + "/Scripts/test", encoding: .utf8)
    #expect(test.contains("FORUM_NCMB_PYTHON"), "the SDK the server's tests drive")
    for script in ["forum", "test"] {
      let text = try String(contentsOfFile: Self.root + "/Scripts/" + script, encoding: .utf8)
      #expect(text.contains("Scripts/setup"), "Scripts/\(script)")
    }
  }
}
