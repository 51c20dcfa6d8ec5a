import Foundation
import HostileImages

/// Hostile and huge images, generated once per test run into a temporary directory (they are
/// megabytes each, so the generators are committed rather than the files).
enum GeneratedImages {
  static let directory: String = {
    var template = Array((NSTemporaryDirectory() + "/forum-generated.XXXXXX").utf8CString)
    let path = String(cString: mkdtemp(&template)!)
    for name in GeneratedSet.names {
      FileManager.default.createFile(
        atPath: path + "/" + name, contents: Data(GeneratedSet.make(name)))
    }
    return path
  }()

  static func path(_ name: String) -> String { directory + "/" + name }

  static func bytes(_ name: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path(name)))
  }
}
