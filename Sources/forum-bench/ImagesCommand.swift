import Foundation
import HostileImages

/// `forum-bench images --out DIR`: writes the generated hostile and huge images, for
/// Scripts/bench-budgets.sh and for seeding the fuzzers.
enum ImagesCommand {
  static func main(_ arguments: [String]) -> Int32 {
    guard arguments.count >= 2, arguments[0] == "--out" else {
      FileHandle.standardError.write(Data("usage: forum-bench images --out DIR [--seeds]\n".utf8))
      return 2
    }
    let files =
      arguments.dropFirst(2).first == "--seeds" ? GeneratedSet.seeds() : GeneratedSet.all()
    let directory = arguments[1]
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
      for (name, bytes) in files {
        let url = URL(fileURLWithPath: directory + "/" + name)
        try FileManager.default.createDirectory(
          at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        print("\(name)\t\(bytes.count) bytes")
      }
      return 0
    } catch {
      FileHandle.standardError.write(Data("forum-bench: \(error)\n".utf8))
      return 1
    }
  }
}
