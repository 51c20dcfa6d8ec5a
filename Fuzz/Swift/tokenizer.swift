// libFuzzer target for the command-line tokenizer and argument grammar: compiled with
// Sources/ForumCLI/Input/Tokenizer.swift by Scripts/fuzz.sh, with a stand-in for CLIError.
import Foundation

enum CLIError: Error {
  case usage(String)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokenizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  guard let line = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  else { return 0 }
  guard let words = try? Tokenizer.words(line) else { return 0 }
  _ = try? Arguments(words, options: ["title", "image", "page", "save"], flags: ["force", "json"])
  return 0
}
